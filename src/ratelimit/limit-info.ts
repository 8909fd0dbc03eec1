import type { RateLimitInfo } from 'express-rate-limit';
import { Refusal } from '../outcomes/refusal';

/** What the X-RateLimit-* headers say of a request's buckets (the tightest one); http/rate-limit-headers.ts writes them. */
export interface RateLimitShown {
  limit: number;
  remaining: number;
  /** When the bucket's window ends; unknown for a counter that does not say. */
  resetTime?: Date;
}

/** What charging a request's buckets came to: what the headers show (nothing when no counter answered), and the 429 when a bucket is spent. */
export interface Charge {
  shown?: RateLimitShown;
  refusal?: Refusal;
}

/** What express-rate-limit makes of a counter: `remaining` never below 0; over the limit once `used` exceeds it. */
export function limitInfo(key: string, limit: number, totalHits: number, resetTime: Date | undefined): RateLimitInfo {
  return { limit, used: totalHits, remaining: Math.max(limit - totalHits, 0), resetTime, key };
}

/** The headers' part of a bucket's info. */
export function shownOf(info: RateLimitInfo): RateLimitShown {
  return { limit: info.limit, remaining: info.remaining, ...(info.resetTime && { resetTime: info.resetTime }) };
}

export function rateLimited(info: RateLimitInfo): Refusal {
  const reset = info.resetTime ?? new Date(Date.now() + 1000);
  return new Refusal('rate_limited', 'too many requests', {}, { retryAt: reset });
}

/** Of the buckets' infos, the one the headers show: the fewest requests remaining. */
export function tightest(infos: RateLimitInfo[]): RateLimitInfo | undefined {
  return infos.reduce<RateLimitInfo | undefined>((a, b) => (!a || b.remaining < a.remaining ? b : a), undefined);
}
