import type { RateLimitInfo } from 'express-rate-limit';
import { AuthFailureThrottle, failureOp, type FailureLimit } from './auth-failures';
import { limitInfo, rateLimited, shownOf, tightest, type Charge } from './limit-info';
import type { Counted, CounterOp, RateCounters } from './counters';

export type BucketKind = 'trigger' | 'channel' | 'workspace';

export interface Bucket {
  kind: BucketKind;
  id: string;
  limit: number;
  windowSeconds: number;
}

export interface RateLimiterOptions {
  /**
   * Where the counters live: express-rate-limit's MemoryStore (StoreCounters), or Redis
   * (RedisCounters: a request's buckets and failed authentications in one command).
   */
  counters: RateCounters;
  /** A counter failed: the request is let through (fail open) and counted. */
  onStoreError(error: unknown): void;
}

/** A client's failed authentications on what it tries to open. */
export interface FailureCheck {
  key: string;
  rule: FailureLimit;
}

/** A charge, or a client blocked for its failed authentications (then no bucket was looked at). */
export type Admission = Charge & { blockedUntil?: Date };

/**
 * Rate limits counted as express-rate-limit counts them (fixed windows; over the limit once
 * the hits exceed it; `remaining` never below 0), on the keys rate-limit-redis uses. A request
 * counts against every bucket it is given (a refused one too); the most restrictive one
 * decides and is the one the X-RateLimit-* headers show. No HTTP here: a charge says what the
 * headers show and whether it is refused; the routes write it (http/rate-limit-headers.ts).
 */
export function createRateLimiter(options: RateLimiterOptions) {
  const { counters, onStoreError } = options;
  const authFailures = new AuthFailureThrottle(counters, onStoreError);

  /** Counts the request against every bucket: what the headers show, and a 429 when any one is exhausted. */
  async function enforce(buckets: Bucket[]): Promise<Charge> {
    return chargeOf(buckets, await counters.count(buckets.map(bucketOp)));
  }

  /**
   * Reads the client's failed authentications and charges the buckets, in one command on
   * Redis. A blocked client gets when it may try again, and no bucket's headers; else the
   * buckets decide (a 429 when one is spent).
   */
  async function admitAndCharge(failure: FailureCheck, buckets: Bucket[]): Promise<Admission> {
    const [read, ...charged] = await counters.count([failureOp(failure.key, failure.rule, false), ...buckets.map(bucketOp)]);
    const until = authFailures.blockedBy(read, failure.rule);
    if (until) return { blockedUntil: until };
    return chargeOf(buckets, charged);
  }

  /** The tightest bucket, or the first one spent and its 429; a bucket whose counter failed lets the request through. */
  function chargeOf(buckets: Bucket[], charged: Array<PromiseSettledResult<Counted>>): Charge {
    const infos: RateLimitInfo[] = [];
    buckets.forEach((bucket, i) => {
      const result = charged[i];
      if (result.status === 'rejected') return onStoreError(result.reason);
      if (result.value) infos.push(limitInfo(bucket.id, bucket.limit, result.value.totalHits, result.value.resetTime));
    });
    const spent = infos.find((info) => info.used > info.limit);
    if (spent) return { shown: shownOf(spent), refusal: rateLimited(spent) };
    const shown = tightest(infos);
    return shown ? { shown: shownOf(shown) } : {};
  }

  // Failed authentications are counted in the same kind of store, never in a tenant's buckets.
  return Object.assign(enforce, { authFailures, admitAndCharge });
}

/** A bucket's counter, in the keys its rate-limit-redis store gave it (`rl:<kind>:<window>:` prefix). */
function bucketOp(bucket: Bucket): CounterOp {
  return { key: `rl:${bucket.kind}:${bucket.windowSeconds}:${bucket.id}`, windowMs: bucket.windowSeconds * 1000, hit: true };
}
