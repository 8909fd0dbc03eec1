import type { Lifecycle } from '../lifecycle';

/** Contract §13: entries older than this are gone, however few there are. */
export const DELIVERY_LOG_MAX_AGE_MS = 7 * 86_400_000;

/** Whose log an entry goes to: a registered trigger (by path) or channel (by id). */
export interface LogTarget {
  kind: 'trigger' | 'channel';
  id: string;
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
 * The delivery log: the last `max` entries of each trigger and channel, at most 7 days old.
 * `append` never rejects: a write that fails is counted (igw_delivery_log_lost_total) and
 * dropped, so the request it describes is never failed or held by it.
 */
export interface DeliveryLog extends Lifecycle {
  append(target: LogTarget, entry: DeliveryEntry): void;
  page(target: LogTarget, limit: number, cursor?: string): Promise<DeliveryPage>;
}

export function targetKey(target: LogTarget): string {
  return `${target.kind}:${target.id}`;
}
