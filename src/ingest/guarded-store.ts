import { HttpError } from '../http/errors';
import type { ClaimResult } from '../idempotency/store';
import { RETRY_AFTER_SECONDS } from './publish-failure';
import type { IngestDeps } from './ports';

/**
 * Claims a key; when the store itself fails, follows IDEMPOTENCY_ON_STORE_ERROR: `accept`
 * publishes without dedupe (at-least-once: the event still carries its key), `refuse` 503s.
 */
export async function claimOrDegrade(deps: IngestDeps, key: string, bodyHash: string): Promise<ClaimResult | 'unguarded'> {
  try {
    return await deps.idempotency.claim(key, bodyHash, deps.config.PUBLISH_TIMEOUT_MS + 10_000);
  } catch (error) {
    const action = deps.config.IDEMPOTENCY_ON_STORE_ERROR === 'accept' ? 'accepted' : 'refused';
    deps.metrics.storeErrors.inc({ store: 'idempotency', action });
    deps.logger.warn({ err: (error as Error).message, action }, 'idempotency store failed');
    if (action === 'refused') {
      throw new HttpError('SERVICE_UNAVAILABLE', 'the idempotency store is unavailable', { reason: 'store' }, {
        'Retry-After': RETRY_AFTER_SECONDS,
      });
    }
    return 'unguarded';
  }
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
