/**
 * One suite for the express-rate-limit Stores whose counting the gateway keeps:
 * express-rate-limit's own MemoryStore (embedded mode counts in it) and rate-limit-redis
 * (whose keys and values RedisCounters shares), on one Redis and on a three-master Redis
 * Cluster this file starts.
 */
import { MemoryStore, type Options, type Store } from 'express-rate-limit';
import { createRedisRateLimitStore } from '../helpers/rate-limit-redis-store';
import type { RedisConnection } from '../../src/redis/connection';
import { TestClock } from '../helpers/clock';
import { uniquePrefix } from '../helpers/redis';
import { redisSetups } from '../helpers/redis-setups';

interface Backend {
  /** A store initialised for windowMs; a second call gives another instance on the same prefix. */
  store(windowMs: number): Promise<Store>;
  shared: boolean;
  /**
   * Lets `ms` pass for the windows. Memory: Date.now(), which MemoryStore reads, is a test
   * clock that moves. Redis: every counter's time to live is shortened by `ms` (PEXPIRE, or
   * DEL once it is up). Windows here are long, so none ends by itself between two calls.
   */
  elapse(ms: number): Promise<void>;
  cleanup(): Promise<void>;
}

const init = async (store: Store, windowMs: number) => {
  await store.init?.({ windowMs } as Options);
  return store;
};

const backends: Array<[string, () => Promise<Backend>]> = [
  [
    'memory',
    async () => {
      const stores: Store[] = [];
      const clock = new TestClock().install();
      return {
        shared: false,
        elapse: async (ms) => clock.advance(ms),
        store: async (windowMs) => {
          const store = new MemoryStore();
          stores.push(store);
          return init(store, windowMs);
        },
        cleanup: async () => {
          for (const store of stores) await store.shutdown?.();
          clock.uninstall();
        },
      };
    },
  ],
  ...redisSetups().map((setup): [string, () => Promise<Backend>] => [
    setup.name,
    async () => {
      const prefix = uniquePrefix('rl');
      const connections: RedisConnection[] = [];
      return {
        shared: true,
        // Each instance gets its own connection, like two gateway processes would.
        store: async (windowMs) => {
          const connection = await setup.connect();
          connections.push(connection);
          return init(createRedisRateLimitStore(connection.client, prefix), windowMs);
        },
        elapse: (ms) => setup.elapse(prefix, ms),
        cleanup: async () => {
          await Promise.all(connections.map((c) => c.close()));
          await setup.deleteKeys(prefix);
          expect(await setup.keysUnder(prefix)).toEqual([]);
        },
      };
    },
  ]),
];

describe.each(backends)('rate-limit Store contract: %s', (_name, create) => {
  let backend: Backend;

  beforeEach(async () => {
    backend = await create();
  });

  afterEach(async () => {
    await backend.cleanup();
  });

  it('counts hits per key, with a reset time within the window', async () => {
    const store = await backend.store(60_000);
    const before = Date.now();
    const first = await store.increment('trigger:orders');
    expect(first.totalHits).toBe(1);
    expect(first.resetTime).toBeInstanceOf(Date);
    expect(first.resetTime!.getTime()).toBeGreaterThan(before);
    expect(first.resetTime!.getTime()).toBeLessThanOrEqual(Date.now() + 60_000 + 50);
    expect((await store.increment('trigger:orders')).totalHits).toBe(2);
    expect((await store.increment('trigger:orders')).totalHits).toBe(3);
  });

  it('keeps keys apart', async () => {
    const store = await backend.store(60_000);
    await store.increment('a');
    await store.increment('a');
    expect((await store.increment('b')).totalHits).toBe(1);
  });

  it('reads the current count with get (undefined for a key never counted)', async () => {
    const store = await backend.store(60_000);
    await expect(Promise.resolve(store.get?.('never'))).resolves.toBeUndefined();
    await store.increment('a');
    await store.increment('a');
    const info = await store.get?.('a');
    expect(info?.totalHits).toBe(2);
    expect(info?.resetTime?.getTime()).toBeGreaterThan(Date.now());
  });

  it('decrements', async () => {
    const store = await backend.store(60_000);
    await store.increment('a');
    await store.increment('a');
    await store.decrement('a');
    expect((await store.increment('a')).totalHits).toBe(2);
  });

  it('resets one key', async () => {
    const store = await backend.store(60_000);
    await store.increment('a');
    await store.increment('a');
    await store.increment('b');
    await store.resetKey('a');
    expect((await store.increment('a')).totalHits).toBe(1);
    expect((await store.increment('b')).totalHits).toBe(2);
  });

  it('starts a new window once the old one is over', async () => {
    const store = await backend.store(60_000);
    await store.increment('a');
    expect((await store.increment('a')).totalHits).toBe(2);
    await backend.elapse(50_000);
    expect((await store.increment('a')).totalHits).toBe(3);
    await backend.elapse(10_000);
    const fresh = await store.increment('a');
    expect(fresh.totalHits).toBe(1);
    expect(fresh.resetTime!.getTime()).toBeGreaterThan(Date.now());
  });

  it('shares counts between two instances on one prefix only where it should (redis: across pods)', async () => {
    const a = await backend.store(60_000);
    const b = await backend.store(60_000);
    await a.increment('ws:1');
    await b.increment('ws:1');
    await a.increment('ws:1');
    const fourth = await b.increment('ws:1');
    // Redis: one counter for every process. Memory: each process counts alone.
    expect(fourth.totalHits).toBe(backend.shared ? 4 : 2);
  });
});
