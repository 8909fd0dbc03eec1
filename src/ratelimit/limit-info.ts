import type { Response } from 'express';
import type { RateLimitInfo } from 'express-rate-limit';
import { isoFormatter } from '../observability/iso-time';
import { Refusal } from '../outcomes/refusal';

/** Within one window every answer carries the same reset time. */
const resetHeaderTime = isoFormatter();

/** What express-rate-limit makes of a counter: `remaining` never below 0; over the limit once `used` exceeds it. */
export function limitInfo(key: string, limit: number, totalHits: number, resetTime: Date | undefined): RateLimitInfo {
  return { limit, used: totalHits, remaining: Math.max(limit - totalHits, 0), resetTime, key };
}

export function setRateLimitHeaders(res: Response, info: RateLimitInfo): void {
  res.setHeader('X-RateLimit-Limit', String(info.limit));
  res.setHeader('X-RateLimit-Remaining', String(info.remaining));
  if (info.resetTime) res.setHeader('X-RateLimit-Reset', resetHeaderTime(info.resetTime.getTime()));
}

export function rateLimited(info: RateLimitInfo): Refusal {
  const reset = info.resetTime ?? new Date(Date.now() + 1000);
  return new Refusal('rate_limited', 'too many requests', {}, { retryAt: reset });
}

/** Of the buckets' infos, the one the headers show: the fewest requests remaining. */
export function tightest(infos: RateLimitInfo[]): RateLimitInfo | undefined {
  return infos.reduce<RateLimitInfo | undefined>((a, b) => (!a || b.remaining < a.remaining ? b : a), undefined);
}
