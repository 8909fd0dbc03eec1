import type { Response } from 'express';
import { isoFormatter } from '../observability/iso-time';
import { keepHeader } from './answer-headers';
import type { Charge, RateLimitShown } from '../ratelimit/limit-info';

/** Within one window every answer carries the same reset time. */
const resetHeaderTime = isoFormatter();

/** The X-RateLimit-* headers of what the limiter shows (none when no bucket's counter answered). */
function writeRateLimitHeaders(res: Response, shown: RateLimitShown | undefined): void {
  if (!shown) return;
  keepHeader(res, 'X-RateLimit-Limit', String(shown.limit));
  keepHeader(res, 'X-RateLimit-Remaining', String(shown.remaining));
  if (shown.resetTime) keepHeader(res, 'X-RateLimit-Reset', resetHeaderTime(shown.resetTime.getTime()));
}

/** A charge on the response: its headers, then its 429 (thrown) when a bucket is spent. */
export function answerCharge(res: Response, charge: Charge): void {
  writeRateLimitHeaders(res, charge.shown);
  if (charge.refusal) throw charge.refusal;
}
