import type { Lifecycle } from '../lifecycle';

/** The acknowledgement the first request got; replayed as-is to a duplicate. */
export interface CompletedResponse {
  status: number;
  body: unknown;
  eventId: string;
}

export type ClaimResult =
  | { state: 'claimed' }
  | { state: 'in_flight'; sameBody: boolean }
  | { state: 'completed'; sameBody: boolean; response: CompletedResponse };

/**
 * Idempotency keys. `key` arrives already scoped by the caller (e.g. `t:<path>:<key>`);
 * the store adds its own prefix. A claim is a lease: it expires by itself after leaseMs,
 * so a crashed process never blocks a key for good.
 */
export interface IdempotencyStore extends Lifecycle {
  claim(key: string, bodyHash: string, leaseMs: number): Promise<ClaimResult>;
  /** Turns the claim into a completed record kept for ttlMs. */
  complete(key: string, bodyHash: string, response: CompletedResponse, ttlMs: number): Promise<void>;
  /** Drops an in-flight claim (the sink failed) so the sender's retry goes through. */
  release(key: string): Promise<void>;
}
