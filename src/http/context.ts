import type { Response } from 'express';
import type { LogTarget } from '../delivery-log/delivery-log';
import type { Outcome, Reason } from '../outcomes/reasons';

/** What a published event carries (CloudEvents distributed-tracing extension, Kafka headers). */
export interface EventTrace {
  traceparent: string;
  tracestate?: string;
}

/** What a route knows about a request that its delivery log entry carries (contract §13). */
export interface DeliveryNotes {
  /** Set once the trigger or channel is found in the registry: only those requests are logged. */
  target?: LogTarget;
  bytes?: number;
  idempotencyKey?: string;
  deliveryId?: string;
  kind?: string;
  diagnostics?: Record<string, unknown>;
  /**
   * Set once the request proved its credential (or its target needs none): it reached the
   * tenant's rate limits. A refusal without it goes to the log's unauthenticated share, and so
   * does an answer noted `false`: a handshake anyone may ask for, charged but proving nothing.
   */
  authenticated?: boolean;
}

/**
 * What one request carries from its first middleware to its last log line: the routes, the
 * error handler and tracing write it; the access log, the delivery log and the request span
 * read it. The only per-request state they share.
 */
export interface RequestContext {
  /** Echoed in X-Request-Id. */
  readonly requestId: string;
  /** The `route` label of the metrics and the access log; unset: `other`. */
  route?: string;
  outcome?: Outcome;
  /** Why it was refused (the catalogue's reason); unset for a served request. */
  reason?: Reason;
  eventId?: string;
  /** The trace context its events carry (W3C Trace Context), set by the tracing middleware. */
  trace?: EventTrace;
  /** What its delivery log entry carries. */
  readonly delivery: DeliveryNotes;
  /** The refusal's details (a schema's `errors`), when it was refused. */
  refusalDetails?: unknown;
}

const CONTEXT = Symbol('requestContext');
type WithContext = Response & { [CONTEXT]?: RequestContext };

/** Gives the request its context: the request context middleware does, before anything else runs. */
export function openContext(res: Response, requestId: string): RequestContext {
  const context: RequestContext = { requestId, delivery: {} };
  (res as WithContext)[CONTEXT] = context;
  return context;
}

/** The request's context (one without a request id when no middleware opened it: a router mounted on its own). */
export function contextOf(res: Response): RequestContext {
  return (res as WithContext)[CONTEXT] ?? openContext(res, '');
}
