import type { Response } from 'express';
import type { LogTarget } from '../delivery-log/delivery-log';

/** What a route knows about a request that its delivery log entry carries (contract §13). */
export interface DeliveryNotes {
  /** Set once the trigger or channel is found in the registry: only those requests are logged. */
  target?: LogTarget;
  bytes?: number;
  idempotencyKey?: string;
  deliveryId?: string;
  kind?: string;
  diagnostics?: Record<string, unknown>;
}

/** What the request ended with, as the access log sees it. */
export interface RequestFacts {
  requestId: string;
  outcome?: string;
  reason?: string;
  eventId?: string;
  /** The refusal's details (a schema's `errors`), when it was refused. */
  refusalDetails?: unknown;
  notes: DeliveryNotes;
}

/*
 * The only two functions that touch res.locals for the delivery log: when res.locals gives
 * way to a typed request context, these two change and nothing else.
 */

export function noteDelivery(res: Response, notes: DeliveryNotes): void {
  res.locals.delivery = Object.assign(res.locals.delivery ?? {}, notes);
}

export function requestFacts(res: Response): RequestFacts {
  const locals = res.locals;
  return {
    requestId: locals.requestId,
    outcome: locals.outcome,
    reason: locals.reason,
    eventId: locals.eventId,
    refusalDetails: locals.refusalDetails,
    notes: locals.delivery ?? {},
  };
}
