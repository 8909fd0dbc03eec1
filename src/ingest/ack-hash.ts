import type { StoredTrigger } from '../registry/schemas';
import { sha256Hex } from '../security';

/**
 * The hash of a trigger's acknowledgement that a completed idempotency key keeps (contract §5),
 * computed once per stored trigger version: a `response.body` may be about 1 MB, and hashing it
 * on every accepted request cost a stringify and a sha256 of it each time. The registry caches
 * trigger objects and replaces them on change, so a WeakMap keyed by the object follows versions.
 */
const hashes = new WeakMap<StoredTrigger, string>();

/** The default acknowledgement differs only by its event id, which the key stores beside the hash. */
export const DEFAULT_ACK_HASH = sha256Hex(JSON.stringify({ status: 200, body: { message: 'Webhook processed', eventId: null } }));

export function acknowledgementHash(trigger: StoredTrigger): string {
  if (!trigger.response) return DEFAULT_ACK_HASH;
  let hash = hashes.get(trigger);
  if (hash === undefined) {
    hash = sha256Hex(JSON.stringify({ status: trigger.response.status, body: trigger.response.body }));
    hashes.set(trigger, hash);
  }
  return hash;
}
