import type { Request, Response } from 'express';
import type { DeliveryEntry, DeliveryLog } from '../delivery-log/delivery-log';
import { contextOf } from './context';
import { whenClosed } from './response-done';

/**
 * When a request to a registered trigger or channel ends (answered, refused or cut off), its
 * entry goes to the delivery log. The write is not awaited and cannot throw into the request.
 */
export function recordDeliveryWhenDone(log: DeliveryLog, req: Request, res: Response): void {
  const started = process.hrtime.bigint();
  const facts = contextOf(res);
  whenClosed(res, () => {
    const { target, diagnostics, bytes, idempotencyKey, deliveryId, kind } = facts.delivery;
    if (!target) return;
    const status = res.statusCode;
    const outcome = facts.outcome ?? (!res.writableFinished ? 'aborted' : status < 400 ? 'ok' : 'error');
    const entry: DeliveryEntry = {
      at: new Date().toISOString(),
      requestId: facts.requestId,
      status,
      outcome,
      ...(facts.reason && { reason: facts.reason }),
      ...(facts.eventId && { eventId: facts.eventId }),
      ...(idempotencyKey && { idempotencyKey }),
      ...(deliveryId && { deliveryId }),
      ...(kind && { kind }),
      bytes: bytes ?? (Number(req.headers['content-length']) || 0),
      ms: Math.round(Number(process.hrtime.bigint() - started) / 1e5) / 10,
      clientIp: req.ip ?? req.socket.remoteAddress ?? 'unknown',
      ...entryDiagnostics(facts.reason, diagnostics, facts.refusalDetails),
    };
    log.append(target, entry);
  });
}

function entryDiagnostics(reason: string | undefined, noted: Record<string, unknown> | undefined, details: unknown) {
  if (noted) return { diagnostics: noted };
  const errors = (details as { errors?: unknown } | undefined)?.errors;
  if (reason === 'schema_invalid' && Array.isArray(errors)) return { diagnostics: { errors } };
  return {};
}
