import type { Options, Store } from 'express-rate-limit';
import type { Counted, CounterOp, RedisCounters } from './redis-counters';

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
  private readonly stores = new Map<number, Store>();

  constructor(
    private readonly storeFor: (prefix: string) => Store,
    private readonly onStoreError: (error: unknown) => void,
    private readonly counters?: RedisCounters,
  ) {}

  /** When `key` may try again, or undefined when it may try now. */
  async blockedUntil(key: string, rule: FailureLimit): Promise<Date | undefined> {
    if (this.counters) {
      const [read] = await this.counters.count([failureOp(key, rule, false)]);
      return this.blockedBy(read, rule);
    }
    try {
      const info = await this.store(rule.windowSeconds).get?.(key);
      if (!info || info.totalHits < rule.limit) return undefined;
      return info.resetTime ?? new Date(Date.now() + rule.windowSeconds * 1000);
    } catch (error) {
      this.onStoreError(error);
      return undefined;
    }
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
    if (this.counters) {
      const [hit] = await this.counters.count([failureOp(key, rule, true)]);
      if (hit.status === 'rejected') this.onStoreError(hit.reason);
      return;
    }
    try {
      await this.store(rule.windowSeconds).increment(key);
    } catch (error) {
      this.onStoreError(error);
    }
  }

  private store(windowSeconds: number): Store {
    let store = this.stores.get(windowSeconds);
    if (!store) {
      store = this.storeFor(`af:${windowSeconds}:`);
      void Promise.resolve(store.init?.({ windowMs: windowSeconds * 1000 } as Options)).catch(this.onStoreError);
      this.stores.set(windowSeconds, store);
    }
    return store;
  }
}

/** The failure counter of `key`, in the keys rate-limit-redis gave it (`af:<window>:` prefix). */
export function failureOp(key: string, rule: FailureLimit, hit: boolean): CounterOp {
  return { key: `af:${rule.windowSeconds}:${key}`, windowMs: rule.windowSeconds * 1000, hit };
}
