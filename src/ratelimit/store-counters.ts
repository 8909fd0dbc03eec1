import type { Options, Store } from 'express-rate-limit';
import type { Counted, CounterOp, RateCounters } from './counters';

/**
 * The counters in express-rate-limit stores (embedded mode: its MemoryStore), one store per
 * window length (a store's window is fixed when it starts). The keys carry their kind and
 * window, as on Redis.
 */
export class StoreCounters implements RateCounters {
  private readonly stores = new Map<number, Store>();

  constructor(private readonly newStore: () => Store) {}

  count(ops: readonly CounterOp[]): Promise<Array<PromiseSettledResult<Counted>>> {
    return Promise.allSettled(ops.map((op) => this.countOne(op)));
  }

  private async countOne({ key, windowMs, hit }: CounterOp): Promise<Counted> {
    const store = this.store(windowMs);
    if (hit) {
      const { totalHits, resetTime } = await store.increment(key);
      return { totalHits, resetTime: resetTime ?? new Date(Date.now() + windowMs) };
    }
    const info = await store.get?.(key);
    return info && { totalHits: info.totalHits, resetTime: info.resetTime ?? new Date(Date.now() + windowMs) };
  }

  private store(windowMs: number): Store {
    let store = this.stores.get(windowMs);
    if (!store) {
      store = this.newStore();
      // A store that fails to start fails its increments too: reported there, per request.
      void Promise.resolve(store.init?.({ windowMs } as Options)).catch(() => undefined);
      this.stores.set(windowMs, store);
    }
    return store;
  }
}
