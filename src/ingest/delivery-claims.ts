import { claimOrDegrade, releaseQuietly, type GuardedClaim, type OwnedClaim } from './guarded-store';
import type { IngestDeps } from './ports';

type Held = OwnedClaim | 'unguarded';

/** The claims a delivery holds, or the earlier claim (of its id, or of its body) it is answered from. */
export type DeliveryClaims =
  | { earlier: Exclude<GuardedClaim, OwnedClaim>; of: 'id' | 'body' }
  | { claim: Held; body?: { storeKey: string; claim: Held } };

const owned = (claim: GuardedClaim | 'unguarded'): claim is OwnedClaim => claim !== 'unguarded' && claim.state === 'claimed';

/**
 * Claims the request's key and, for a delivery whose id is unsigned (contract §5), its body
 * under its kind too: both at once, so the store answers them in one round trip (ioredis
 * auto-pipelining). What is not needed is given back: the body's claim when the id was
 * accepted before (or the store failed for it), the id's claim when the body was accepted
 * under another id or its claim failed.
 */
export async function claimDelivery(deps: IngestDeps, storeKey: string, bodyKey: string | undefined, bodyHash: string): Promise<DeliveryClaims> {
  if (bodyKey === undefined) {
    const claim = await claimOrDegrade(deps, storeKey, bodyHash);
    return owned(claim) || claim === 'unguarded' ? { claim } : { earlier: claim, of: 'id' };
  }
  const [id, body] = await Promise.allSettled([claimOrDegrade(deps, storeKey, bodyHash), claimOrDegrade(deps, bodyKey, bodyHash)]);
  const bodyOwned = body.status === 'fulfilled' && owned(body.value) ? body.value : undefined;
  const idOwned = id.status === 'fulfilled' && owned(id.value) ? id.value : undefined;
  if (!idOwned) {
    // No id claim to pair the body's with (an earlier claim, or the store failed for it).
    if (bodyOwned) await releaseQuietly(deps, bodyKey, bodyOwned);
    if (id.status === 'rejected') throw id.reason;
    return id.value === 'unguarded' ? { claim: 'unguarded' } : { earlier: id.value as Exclude<GuardedClaim, OwnedClaim>, of: 'id' };
  }
  if (body.status === 'rejected') {
    await releaseQuietly(deps, storeKey, idOwned);
    throw body.reason;
  }
  const bodyHeld = body.value === 'unguarded' ? 'unguarded' : bodyOwned;
  if (bodyHeld) return { claim: idOwned, body: { storeKey: bodyKey, claim: bodyHeld } };
  await releaseQuietly(deps, storeKey, idOwned);
  return { earlier: body.value as Exclude<GuardedClaim, OwnedClaim>, of: 'body' };
}
