import type { Request, Response } from 'express';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import type { Outcome } from '../outcomes/reasons';
import { contextOf } from './context';
import { whenClosed } from './response-done';

/**
 * The access log's logger: the root logger's redaction scans every field of every line for
 * credential names, which cost four times the line itself, and the access log's fields are
 * fixed and never carry one (the path is logged without its query string: query strings can
 * carry verify tokens).
 */
export function accessLogger(logger: Logger): Logger {
  return logger.child({}, { redact: { paths: [] } });
}

/** One log line and one metric sample when the response is done, labelled with the route and the outcome. */
export function logWhenFinished(logger: Logger, metrics: Metrics, req: Request, res: Response): void {
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
    logger.info(
      {
        reqId: context.requestId,
        method: req.method,
        path: req.path,
        route,
        status: res.statusCode,
        outcome,
        reason,
        ms: Math.round(seconds * 1e4) / 10,
        ...(context.eventId && { eventId: context.eventId }),
      },
      'request',
    );
  });
}
