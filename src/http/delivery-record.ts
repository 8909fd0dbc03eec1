import type { Request, Response } from 'express';
import type { DeliveryEntry, DeliveryLog } from '../delivery-log/delivery-log';
import { boundedEntry } from '../delivery-log/entry-bounds';
import { isoFormatter } from '../observability/iso-time';
import { contextOf } from './context';
import { whenClosed } from './response-done';

const entryTime = isoFormatter();
const CLIENT_CLOSED_REQUEST = 499;

/**
 * When a request to a registered trigger or channel ends (answered, refused or cut off), its
 * entry, cut to its bounds (entry-bounds.ts), goes to the delivery log. The write is not awaited
 * and cannot throw into the request.
 */
export function recordDeliveryWhenDone(log: DeliveryLog, req: Request, res: Response): void {
  const started = performance.now();
  const facts = contextOf(res);
  whenClosed(res, () => {
    const { target, diagnostics, bytes, idempotencyKey, deliveryId, kind, authenticated } = facts.delivery;
    if (!target) return;
    // A sender gone before any answer got no status: 499 (nginx's "client closed request").
    const status = res.headersSent ? res.statusCode : CLIENT_CLOSED_REQUEST;
    // Built by assignment in the contract's key order: no temporary object per optional field.
    const entry = {
      at: entryTime(Date.now()),
      requestId: facts.requestId,
      status,
      outcome: facts.outcome ?? (!res.writableFinished ? 'aborted' : status < 400 ? 'ok' : 'error'),
    } as DeliveryEntry;
    if (facts.reason) entry.reason = facts.reason;
    if (facts.eventId) entry.eventId = facts.eventId;
    if (idempotencyKey) entry.idempotencyKey = idempotencyKey;
    if (deliveryId) entry.deliveryId = deliveryId;
    if (kind) entry.kind = kind;
    entry.bytes = bytes ?? (Number(req.headers['content-length']) || 0);
    entry.ms = Math.round((performance.now() - started) * 10) / 10;
    entry.clientIp = req.ip ?? req.socket.remoteAddress ?? 'unknown';
    const entryDiagnostics = diagnosticsOf(facts.reason, diagnostics, facts.refusalDetails);
    if (entryDiagnostics) entry.diagnostics = entryDiagnostics;
    // A stranger's refusal, or a handshake answered to anyone, goes to its own share: a flood of
    // them never evicts the record (contract §13.1).
    log.append(target, boundedEntry(entry), authenticated || (status < 400 && authenticated === undefined) ? 'main' : 'unauthenticated');
  });
}

function diagnosticsOf(reason: string | undefined, noted: Record<string, unknown> | undefined, details: unknown): Record<string, unknown> | undefined {
  if (noted) return noted;
  const errors = (details as { errors?: unknown } | undefined)?.errors;
  if (reason === 'schema_invalid' && Array.isArray(errors)) return { errors };
  return undefined;
}
