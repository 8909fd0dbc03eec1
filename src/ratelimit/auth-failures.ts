import type { Counted, CounterOp, RateCounters } from './counters';

/** `limit` failed authentications within `windowSeconds`. */
export interface FailureLimit {
  limit: number;
  windowSeconds: number;
}

/**
 * Failed authentications counted per key (a client address and what it tried to open), in the
 * same store as the rate limits (memory, or Redis shared by every pod). Once a key has failed
 * `limit` times within the window, it is refused until the window ends, before its
 * credential is even looked at: guessing is bounded, and a guess made while refused tells
 * nothing. A store that fails lets the request through (like the rate limits) and is reported.
 */
export class AuthFailureThrottle {
  constructor(
    private readonly counters: RateCounters,
    private readonly onStoreError: (error: unknown) => void,
  ) {}

  /** When `key` may try again, or undefined when it may try now. */
  async blockedUntil(key: string, rule: FailureLimit): Promise<Date | undefined> {
    const [read] = await this.counters.count([failureOp(key, rule, false)]);
    return this.blockedBy(read, rule);
  }

  /** What a read of the failure counter (`failureOp`) says, a failed read counted and let through. */
  blockedBy(read: PromiseSettledResult<Counted>, rule: FailureLimit): Date | undefined {
    if (read.status === 'rejected') {
      this.onStoreError(read.reason);
      return undefined;
    }
    if (!read.value || read.value.totalHits < rule.limit) return undefined;
    return read.value.resetTime;
  }

  async recordFailure(key: string, rule: FailureLimit): Promise<void> {
    const [hit] = await this.counters.count([failureOp(key, rule, true)]);
    if (hit.status === 'rejected') this.onStoreError(hit.reason);
  }
}

/** The failure counter of `key`, in the keys rate-limit-redis gave it (`af:<window>:` prefix). */
export function failureOp(key: string, rule: FailureLimit, hit: boolean): CounterOp {
  return { key: `af:${rule.windowSeconds}:${key}`, windowMs: rule.windowSeconds * 1000, hit };
}
