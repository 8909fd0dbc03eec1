import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { rateLimit, type RateLimitInfo, type Store } from 'express-rate-limit';
import { Refusal } from '../outcomes/refusal';
import { AuthFailureThrottle } from './auth-failures';

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
}

/** The buckets each request is being counted against, for the limiters' key and limit callbacks. */
const bucketsOf = new WeakMap<Response, Partial<Record<BucketKind, Bucket>>>();

/**
 * Rate limits with express-rate-limit: one limiter per bucket kind and window length
 * (the library fixes the window per instance), keys and limits taken from the request.
 * A request counts against every bucket it is given (a refused one too); the most
 * restrictive one decides and is the one shown in the X-RateLimit-* headers.
 */
export function createRateLimiter(options: RateLimiterOptions) {
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
    const tightest = infos.reduce<RateLimitInfo | undefined>((a, b) => (!a || b.remaining < a.remaining ? b : a), undefined);
    if (tightest) setRateLimitHeaders(res, tightest);
  }

  // Failed authentications are counted in the same kind of store, never in a tenant's buckets.
  return Object.assign(enforce, { authFailures: new AuthFailureThrottle(options.storeFor, options.onStoreError) });
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

function setRateLimitHeaders(res: Response, info: RateLimitInfo): void {
  res.setHeader('X-RateLimit-Limit', String(info.limit));
  res.setHeader('X-RateLimit-Remaining', String(info.remaining));
  if (info.resetTime) res.setHeader('X-RateLimit-Reset', info.resetTime.toISOString());
}

function rateLimited(info: RateLimitInfo): Refusal {
  const reset = info.resetTime ?? new Date(Date.now() + 1000);
  return new Refusal('rate_limited', 'too many requests', { retryAfter: reset.toISOString() }, { retryAt: reset });
}
