import type { Lifecycle } from '../lifecycle';

/**
 * What a completed key keeps of the first acknowledgement (contract §5): bounded and small,
 * whatever the trigger's `response.body`. A replay rebuilds the body from the trigger.
 */
export interface CompletedResponse {
  status: number;
  eventId: string;
  /** SHA-256 (hex) of the acknowledgement's body as first sent; absent where there is none (chat). */
  ackHash?: string;
}

/** Only the fields a store keeps: a caller's object may carry more (a chat ack's `body: null`). */
export function storedResponse(response: CompletedResponse): CompletedResponse {
  return {
    status: response.status,
    eventId: response.eventId,
    ...(response.ackHash !== undefined && { ackHash: response.ackHash }),
  };
}

export type ClaimResult =
  | { state: 'claimed' }
  | { state: 'in_flight'; sameBody: boolean }
  | { state: 'completed'; sameBody: boolean; response: CompletedResponse };

/**
 * Idempotency keys. `key` arrives already scoped by the caller (see triggerStoreKey); the
 * store adds its own prefix. A claim is a lease held by an owner: a random token the caller
 * makes for each claim (the value of Redis' SET NX lock pattern). Only that owner may
 * complete or release it, so a request whose lease ran out can never free or overwrite the
 * claim of the request that took the key after it. A lease expires by itself after leaseMs,
 * so a crashed process never blocks a key for good.
 */
export interface IdempotencyStore extends Lifecycle {
  claim(key: string, owner: string, bodyHash: string, leaseMs: number): Promise<ClaimResult>;
  /**
   * Turns the owner's claim into the completed record, kept for ttlMs. Also writes it when
   * the key is free (the lease ran out, nobody took it: the acknowledgement is still true).
   * Repeating a completion that was already written is a success. Resolves false, writing
   * nothing, when another owner's claim or another record holds the key.
   */
  complete(key: string, owner: string, bodyHash: string, response: CompletedResponse, ttlMs: number): Promise<boolean>;
  /** Drops the owner's in-flight claim (the sink failed) so the sender's retry goes through. */
  release(key: string, owner: string): Promise<void>;
}
