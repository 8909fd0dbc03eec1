import type { Options, Store } from 'express-rate-limit';

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
  ) {}

  /** When `key` may try again, or undefined when it may try now. */
  async blockedUntil(key: string, rule: FailureLimit): Promise<Date | undefined> {
    try {
      const info = await this.store(rule.windowSeconds).get?.(key);
      if (!info || info.totalHits < rule.limit) return undefined;
      return info.resetTime ?? new Date(Date.now() + rule.windowSeconds * 1000);
    } catch (error) {
      this.onStoreError(error);
      return undefined;
    }
  }

  async recordFailure(key: string, rule: FailureLimit): Promise<void> {
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
