import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { rateLimit, type RateLimitInfo, type Store } from 'express-rate-limit';
import { AuthFailureThrottle, failureOp, type FailureLimit } from './auth-failures';
import { limitInfo, RATE_LIMIT_HEADERS, rateLimited, setRateLimitHeaders, tightest } from './limit-info';
import type { Counted, CounterOp, RedisCounters } from './redis-counters';

export type BucketKind = 'trigger' | 'channel' | 'workspace';

export interface Bucket {
  kind: BucketKind;
  id: string;
  limit: number;
  windowSeconds: number;
}

export interface RateLimiterOptions {
  /** A store for one bucket kind and window; each gets its own prefix. */
  storeFor(prefix: string): Store;
  /** A store failed: the request is let through (fail open) and counted. */
  onStoreError(error: unknown): void;
  /**
   * Redis: a request's counters (its buckets, its failed authentications) in one command, on
   * the keys the stores use, in place of one limiter call per bucket.
   */
  counters?: RedisCounters;
}

/** A client's failed authentications on what it tries to open. */
export interface FailureCheck {
  key: string;
  rule: FailureLimit;
}

/** The buckets each request is being counted against, for the limiters' key and limit callbacks. */
const bucketsOf = new WeakMap<Response, Partial<Record<BucketKind, Bucket>>>();

/**
 * Rate limits with express-rate-limit: one limiter per bucket kind and window length
 * (the library fixes the window per instance), keys and limits taken from the request.
 * A request counts against every bucket it is given (a refused one too); the most
 * restrictive one decides and is the one shown in the X-RateLimit-* headers.
 * With `counters` (Redis) the same counting and headers, in one command per request.
 */
export function createRateLimiter(options: RateLimiterOptions) {
  const { counters, onStoreError } = options;
  const authFailures = new AuthFailureThrottle(options.storeFor, onStoreError, counters);
  const limiters = new Map<string, RequestHandler>();

  function limiterFor(kind: BucketKind, windowSeconds: number): RequestHandler {
    const name = `${kind}:${windowSeconds}`;
    let limiter = limiters.get(name);
    if (!limiter) {
      limiter = rateLimit({
        windowMs: windowSeconds * 1000,
        limit: (_req, res) => bucketOf(res, kind).limit,
        keyGenerator: (_req, res) => bucketOf(res, kind).id,
        requestPropertyName: propertyName(kind),
        standardHeaders: false,
        legacyHeaders: false,
        passOnStoreError: true,
        validate: false,
        store: options.storeFor(`rl:${name}:`),
        logger: { error: (error) => options.onStoreError(error), warn: () => undefined },
        handler: (req, res, next) => {
          const info = (req as unknown as Record<string, RateLimitInfo>)[propertyName(kind)];
          setRateLimitHeaders(res, info);
          next(rateLimited(info));
        },
      });
      limiters.set(name, limiter);
    }
    return limiter;
  }

  /** Counts the request against every bucket; rejects with 429 when any one is exhausted. */
  async function enforce(req: Request, res: Response, buckets: Bucket[]): Promise<void> {
    if (counters) return applyCharges(res, buckets, await counters.count(buckets.map(bucketOp)));
    const byKind: Partial<Record<BucketKind, Bucket>> = {};
    for (const bucket of buckets) byKind[bucket.kind] = bucket;
    bucketsOf.set(res, byKind);
    // All buckets at once: their Redis calls share one round trip (auto-pipelining).
    const results = await Promise.allSettled(buckets.map((b) => run(limiterFor(b.kind, b.windowSeconds), req, res)));
    const refused = results.find((result) => result.status === 'rejected');
    if (refused) throw refused.reason;
    const infos: RateLimitInfo[] = [];
    for (const bucket of buckets) {
      const info = (req as unknown as Record<string, RateLimitInfo | undefined>)[propertyName(bucket.kind)];
      if (info) infos.push(info);
    }
    const shown = tightest(infos);
    if (shown) setRateLimitHeaders(res, shown);
  }

  /**
   * Reads the client's failed authentications and charges the buckets, in one command with
   * `counters`. A blocked client gets when it may try again, and no bucket's headers; else
   * the buckets decide (429 when one is spent).
   */
  async function admitAndCharge(req: Request, res: Response, failure: FailureCheck, buckets: Bucket[]): Promise<Date | undefined> {
    if (!counters) {
      const [until, charged] = await Promise.allSettled([authFailures.blockedUntil(failure.key, failure.rule), enforce(req, res, buckets)]);
      if (until.status === 'fulfilled' && until.value) {
        for (const header of RATE_LIMIT_HEADERS) res.removeHeader(header);
        return until.value;
      }
      if (charged.status === 'rejected') throw charged.reason;
      return undefined;
    }
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

function bucketOf(res: Response, kind: BucketKind): Bucket {
  return bucketsOf.get(res)![kind]!;
}

function propertyName(kind: BucketKind): string {
  return `rateLimit_${kind}`;
}

function run(middleware: RequestHandler, req: Request, res: Response): Promise<void> {
  return new Promise((resolve, reject) => {
    const next: NextFunction = (error?: unknown) => (error ? reject(error) : resolve());
    Promise.resolve(middleware(req, res, next)).catch(reject);
  });
}
