import { setTimeout as delay } from 'node:timers/promises';
import { Refusal } from '../outcomes/refusal';
import { randomText } from '../random-pool';
import type { ClaimResult, CompletedResponse } from '../idempotency/store';
import type { IngestDeps } from './ports';

/** A claim this request holds: only its token can complete or release it. */
export interface OwnedClaim {
  state: 'claimed';
  token: string;
}

export type GuardedClaim = OwnedClaim | Exclude<ClaimResult, { state: 'claimed' }>;

/** First pause between two completion attempts; doubled each time up to the cap. */
const COMPLETE_RETRY_FIRST_MS = 25;
const COMPLETE_RETRY_MAX_MS = 500;

/**
 * Claims a key under a fresh owner token; when the store itself fails, follows
 * IDEMPOTENCY_ON_STORE_ERROR: `accept` publishes without dedupe (at-least-once: the event
 * still carries its key), `refuse` 503s.
 */
export async function claimOrDegrade(
  deps: IngestDeps,
  key: string,
  bodyHash: string,
  leaseMs = deps.config.PUBLISH_TIMEOUT_MS + 10_000,
): Promise<GuardedClaim | 'unguarded'> {
  // 128 random bits as one flat string (randomUUID's is a tree of concatenated pieces).
  const token = randomText(16, 'base64url');
  try {
    const claim = await deps.idempotency.claim(key, token, bodyHash, leaseMs);
    return claim.state === 'claimed' ? { state: 'claimed', token } : claim;
  } catch (error) {
    const action = deps.config.IDEMPOTENCY_ON_STORE_ERROR === 'accept' ? 'accepted' : 'refused';
    deps.metrics.storeErrors.inc({ store: 'idempotency', action });
    deps.logger.warn({ err: (error as Error).message, action }, 'idempotency store failed');
    if (action === 'refused') {
      throw new Refusal('store_unavailable', 'the idempotency store is unavailable', {});
    }
    return 'unguarded';
  }
}

/**
 * Records the acknowledgement of a published event. Never throws and never releases: the
 * event is in the sink, so until the record is written the key stays closed by the claim
 * (a retry gets 409, not a second publish). A failed write is retried at least once and then
 * for at most REDIS_TIMEOUT_MS from the first failure: a store that is down answers every
 * attempt at once, and waiting for it to come back would hold the sender's 2xx for as long
 * as the outage lasts. A completion still unwritten then is logged at error level, and the
 * claim keeps the key closed until its lease (PUBLISH_TIMEOUT_MS + 10 s) ends.
 */
export async function completeOrRetry(
  deps: IngestDeps,
  key: string,
  claim: OwnedClaim,
  bodyHash: string,
  response: CompletedResponse,
  ttlMs: number,
): Promise<void> {
  let pause = COMPLETE_RETRY_FIRST_MS;
  let giveUpAt: number | undefined;
  for (let attempt = 1; ; attempt += 1) {
    try {
      const written = await deps.idempotency.complete(key, claim.token, bodyHash, response, ttlMs);
      if (!written) {
        // Only after this claim's lease ran out and another request took the key.
        deps.metrics.storeErrors.inc({ store: 'idempotency', action: 'complete_lost' });
        deps.logger.warn({ eventId: response.eventId }, 'idempotency claim lost before completion: another request holds the key');
      }
      return;
    } catch (error) {
      deps.metrics.storeErrors.inc({ store: 'idempotency', action: 'complete' });
      const message = (error as Error).message;
      giveUpAt ??= Date.now() + deps.config.REDIS_TIMEOUT_MS;
      if (attempt > 1 && Date.now() + pause >= giveUpAt) {
        deps.metrics.storeErrors.inc({ store: 'idempotency', action: 'complete_abandoned' });
        deps.logger.error(
          { err: message, eventId: response.eventId, attempts: attempt },
          'idempotency completion not recorded: the key stays closed until its lease ends',
        );
        return;
      }
      deps.logger.warn({ err: message, eventId: response.eventId, retryInMs: pause }, 'idempotency complete failed; retrying');
      await delay(pause);
      pause = Math.min(2 * pause, COMPLETE_RETRY_MAX_MS);
    }
  }
}

/** Gives the claim back (nothing was published) so the sender's retry goes through. */
export async function releaseQuietly(deps: IngestDeps, key: string, claim: OwnedClaim): Promise<void> {
  await settleQuietly(deps, 'release', () => deps.idempotency.release(key, claim.token));
}

/** Best effort: a failed call leaves the claim to expire by itself. */
export async function settleQuietly(deps: IngestDeps, what: string, op: () => Promise<void>): Promise<void> {
  try {
    await op();
  } catch (error) {
    deps.metrics.storeErrors.inc({ store: 'idempotency', action: what });
    deps.logger.warn({ err: (error as Error).message }, `idempotency ${what} failed`);
  }
}
