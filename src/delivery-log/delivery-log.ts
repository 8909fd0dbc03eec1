import type { Lifecycle } from '../lifecycle';

/** Contract §13: entries older than this are gone, however few there are. */
export const DELIVERY_LOG_MAX_AGE_MS = 7 * 86_400_000;

/**
 * Whose log an entry goes to: a registered trigger (by path) or channel (by id), and which
 * registration of it (contract §13.1: deleted and registered again, it starts with an empty
 * log). Records stored before registrations had ids have none: their log is the path's alone.
 */
export interface LogTarget {
  kind: 'trigger' | 'channel';
  id: string;
  registration?: string;
}

/**
 * Which share of a log an entry goes to (contract §13.1): `unauthenticated` for a request
 * refused before it proved a credential (no or wrong credentials, bad signatures, and anything
 * else refused first: 404, 405, a throttled client), so a flood of those never evicts the
 * entries of deliveries that were accepted or authenticated (`main`).
 */
export type LogShare = 'main' | 'unauthenticated';

/** Entries the unauthenticated share keeps per trigger or channel, beside the `maxEntries` of the main share. */
export function unauthenticatedShare(maxEntries: number): number {
  return Math.max(1, Math.ceil(maxEntries / 4));
}

/** The log of a registered trigger or channel: its registration id, when the record has one. */
export function logTarget(kind: LogTarget['kind'], id: string, record: { registrationId?: string }): LogTarget {
  return record.registrationId === undefined ? { kind, id } : { kind, id, registration: record.registrationId };
}

/**
 * One request to a registered trigger or channel (contract §13). Never a header, a body, a
 * secret or an expected signature.
 */
export interface DeliveryEntry {
  at: string;
  requestId: string;
  status: number;
  outcome: string;
  reason?: string;
  eventId?: string;
  idempotencyKey?: string;
  deliveryId?: string;
  kind?: string;
  /** The request body's bytes as received (or as declared, when it was refused before it was read). */
  bytes: number;
  ms: number;
  clientIp: string;
  /** Why a signed delivery was refused (src/providers/diagnostics.ts), or a refused schema's `errors`. */
  diagnostics?: Record<string, unknown>;
}

export interface DeliveryPage {
  /** Newest first. */
  entries: DeliveryEntry[];
  /** Opaque: the position after the last entry of this page; null on the last page. */
  nextCursor: string | null;
}

/** The cursor is not one this log gave out: a 400. */
export class InvalidCursorError extends Error {
  constructor() {
    super('invalid cursor');
    this.name = 'InvalidCursorError';
  }
}

/**
 * The delivery log: the last `max` entries of each trigger and channel (and, apart, the last
 * `unauthenticatedShare(max)` unauthenticated refusals), at most 7 days old; a page merges
 * both shares, newest first.
 * `append` never rejects: a write that fails is counted (igw_delivery_log_lost_total) and
 * dropped, so the request it describes is never failed or held by it.
 */
export interface DeliveryLog extends Lifecycle {
  append(target: LogTarget, entry: DeliveryEntry, share?: LogShare): void;
  page(target: LogTarget, limit: number, cursor?: string): Promise<DeliveryPage>;
}

export function targetKey(target: LogTarget): string {
  // Paths and channel ids never contain ':', so the registration cannot be confused with them.
  return target.registration === undefined ? `${target.kind}:${target.id}` : `${target.kind}:${target.id}:${target.registration}`;
}
