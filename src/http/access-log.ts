import type { Request, Response } from 'express';
import pino from 'pino';
import { timeField, type Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import type { Outcome } from '../outcomes/reasons';
import { contextOf } from './context';
import { whenClosed } from './response-done';

/** The fields of one access log line, in the order they are written. */
export interface AccessLine {
  reqId: string;
  method: string;
  path: string;
  route: string;
  status: number;
  outcome: string;
  reason: string;
  ms: number;
  eventId?: string;
}

export type AccessLog = (line: AccessLine) => void;

const INFO = 30;
const quoted = JSON.stringify;

/**
 * The access log: one line per request, the line `logger.info(fields, 'request')` writes (same
 * level label, time, bindings and key order, to the logger's destination), built as one
 * template. pino's generic serializer walks the object and looks up a serializer per key, and
 * its redaction scans every field for credential names: profiled at 8 µs of a request's 90 on
 * Node 24. These fields are fixed and never carry a credential (the path is logged without its
 * query string: query strings can carry verify tokens). It relies on the logger createLogger
 * makes: one destination, no hooks, mixin or message prefix (a multistream destination, which
 * routes by the last level pino wrote, would need pino's own write).
 */
export function accessLogger(logger: Logger): AccessLog {
  const destination = (logger as unknown as Record<symbol, { write(line: string): unknown }>)[pino.symbols.streamSym];
  const bindings = (logger as unknown as Record<symbol, string>)[pino.symbols.chindingsSym];
  return (line) => {
    if (logger.levelVal > INFO) return;
    destination.write(
      `{"level":"info"${timeField()}${bindings},"reqId":${quoted(line.reqId)},"method":${quoted(line.method)},"path":${quoted(line.path)}` +
        `,"route":${quoted(line.route)},"status":${line.status},"outcome":${quoted(line.outcome)},"reason":${quoted(line.reason)},"ms":${line.ms}` +
        `${line.eventId ? `,"eventId":${quoted(line.eventId)}` : ''},"msg":"request"}\n`,
    );
  };
}

/** One log line and one metric sample when the response is done, labelled with the route and the outcome. */
export function logWhenFinished(log: AccessLog, metrics: Metrics, req: Request, res: Response): void {
  const started = process.hrtime.bigint();
  const context = contextOf(res);
  whenClosed(res, () => {
    if (!res.writableFinished) return; // cut off before it was answered: no line, as before
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const route: string = context.route ?? 'other';
    const outcome: Outcome = context.outcome ?? (res.statusCode < 400 ? 'ok' : 'error');
    // An error's reason comes from REASONS; a served request's reason is its outcome.
    const reason: string = context.reason ?? outcome;
    metrics.requests.inc({ route, outcome, reason, status: res.statusCode });
    metrics.latency.observe({ route, outcome }, seconds);
    log({
      reqId: context.requestId,
      method: req.method,
      path: req.path,
      route,
      status: res.statusCode,
      outcome,
      reason,
      ms: Math.round(seconds * 1e4) / 10,
      eventId: context.eventId,
    });
  });
}
