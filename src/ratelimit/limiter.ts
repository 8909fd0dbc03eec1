import type { Response } from 'express';
import type { RateLimitInfo } from 'express-rate-limit';
import { AuthFailureThrottle, failureOp, type FailureLimit } from './auth-failures';
import { limitInfo, rateLimited, setRateLimitHeaders, tightest } from './limit-info';
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

/**
 * Rate limits counted as express-rate-limit counts them (fixed windows; over the limit once
 * the hits exceed it; `remaining` never below 0), on the keys rate-limit-redis uses. A request
 * counts against every bucket it is given (a refused one too); the most restrictive one
 * decides and is the one shown in the X-RateLimit-* headers.
 */
export function createRateLimiter(options: RateLimiterOptions) {
  const { counters, onStoreError } = options;
  const authFailures = new AuthFailureThrottle(counters, onStoreError);

  /** Counts the request against every bucket; rejects with 429 when any one is exhausted. */
  async function enforce(res: Response, buckets: Bucket[]): Promise<void> {
    applyCharges(res, buckets, await counters.count(buckets.map(bucketOp)));
  }

  /**
   * Reads the client's failed authentications and charges the buckets, in one command on
   * Redis. A blocked client gets when it may try again, and no bucket's headers; else the
   * buckets decide (429 when one is spent).
   */
  async function admitAndCharge(res: Response, failure: FailureCheck, buckets: Bucket[]): Promise<Date | undefined> {
    const [read, ...charged] = await counters.count([failureOp(failure.key, failure.rule, false), ...buckets.map(bucketOp)]);
    const until = authFailures.blockedBy(read, failure.rule);
    if (until) return until;
    applyCharges(res, buckets, charged);
    return undefined;
  }

  /** Headers of the tightest bucket, or 429 for the first one spent; a bucket whose counter failed lets the request through. */
  function applyCharges(res: Response, buckets: Bucket[], charged: Array<PromiseSettledResult<Counted>>): void {
    const infos: RateLimitInfo[] = [];
    buckets.forEach((bucket, i) => {
      const result = charged[i];
      if (result.status === 'rejected') return onStoreError(result.reason);
      if (result.value) infos.push(limitInfo(bucket.id, bucket.limit, result.value.totalHits, result.value.resetTime));
    });
    const spent = infos.find((info) => info.used > info.limit);
    if (spent) {
      setRateLimitHeaders(res, spent);
      throw rateLimited(spent);
    }
    const shown = tightest(infos);
    if (shown) setRateLimitHeaders(res, shown);
  }

  // Failed authentications are counted in the same kind of store, never in a tenant's buckets.
  return Object.assign(enforce, { authFailures, admitAndCharge });
}

/** A bucket's counter, in the keys its rate-limit-redis store gave it (`rl:<kind>:<window>:` prefix). */
function bucketOp(bucket: Bucket): CounterOp {
  return { key: `rl:${bucket.kind}:${bucket.windowSeconds}:${bucket.id}`, windowMs: bucket.windowSeconds * 1000, hit: true };
}
