/**
 * One suite, every IdempotencyStore: the embedded (memory) store and the Redis store must
 * behave the same. Redis runs at REDIS_TEST_URL (127.0.0.1:6379) with a unique prefix.
 */
import type Redis from 'ioredis';
import { MemoryIdempotencyStore } from '../../src/idempotency/memory';
import { RedisIdempotencyStore } from '../../src/idempotency/redis';
import type { CompletedResponse, IdempotencyStore } from '../../src/idempotency/store';
import { RedisConnection } from '../../src/redis/connection';
import { REDIS_TEST_URL, deleteKeys, requireRedis, silentLogger, sleep, uniquePrefix } from '../helpers/redis';

interface Backend {
  store: IdempotencyStore;
  cleanup(): Promise<void>;
}

const backends: Array<[string, () => Promise<Backend>]> = [
  [
    'memory',
    async () => {
      const store = new MemoryIdempotencyStore();
      await store.start();
      return { store, cleanup: () => store.close() };
    },
  ],
  [
    'redis',
    async () => {
      const admin: Redis = await requireRedis();
      const prefix = uniquePrefix('idem');
      const connection = new RedisConnection(REDIS_TEST_URL, 1000, silentLogger());
      await connection.start();
      const store = new RedisIdempotencyStore(connection.client, prefix);
      await store.start();
      return {
        store,
        cleanup: async () => {
          await store.close();
          await connection.close();
          await deleteKeys(admin, prefix);
          expect(await admin.keys(`${prefix}*`)).toEqual([]);
          admin.disconnect();
        },
      };
    },
  ],
];

const response: CompletedResponse = {
  status: 202,
  body: { message: 'Webhook processed', eventId: 'evt-1', nested: { list: [1, 'two', null] } },
  eventId: 'evt-1',
};
const LEASE = 30_000;
const TTL = 60_000;

describe.each(backends)('IdempotencyStore contract: %s', (_name, create) => {
  let backend: Backend;
  let store: IdempotencyStore;

  beforeEach(async () => {
    backend = await create();
    store = backend.store;
  });

  afterEach(async () => {
    await backend.cleanup();
  });

  it('answers ping', async () => {
    await expect(store.ping()).resolves.toBeUndefined();
  });

  it('claims a free key', async () => {
    await expect(store.claim('t:a:k1', 'hash-1', LEASE)).resolves.toEqual({ state: 'claimed' });
  });

  it('reports a second claim with the same body as in flight, same body', async () => {
    await store.claim('t:a:k1', 'hash-1', LEASE);
    await expect(store.claim('t:a:k1', 'hash-1', LEASE)).resolves.toEqual({ state: 'in_flight', sameBody: true });
  });

  it('reports a second claim with another body as in flight, other body', async () => {
    await store.claim('t:a:k1', 'hash-1', LEASE);
    await expect(store.claim('t:a:k1', 'hash-2', LEASE)).resolves.toEqual({ state: 'in_flight', sameBody: false });
  });

  it('keeps keys apart', async () => {
    await store.claim('t:a:k1', 'hash-1', LEASE);
    await expect(store.claim('t:a:k2', 'hash-1', LEASE)).resolves.toEqual({ state: 'claimed' });
    await expect(store.claim('t:b:k1', 'hash-1', LEASE)).resolves.toEqual({ state: 'claimed' });
  });

  it('replays the completed response', async () => {
    await store.claim('t:a:k1', 'hash-1', LEASE);
    await store.complete('t:a:k1', 'hash-1', response, TTL);
    await expect(store.claim('t:a:k1', 'hash-1', LEASE)).resolves.toEqual({
      state: 'completed',
      sameBody: true,
      response,
    });
    await expect(store.claim('t:a:k1', 'hash-2', LEASE)).resolves.toEqual({
      state: 'completed',
      sameBody: false,
      response,
    });
  });

  it('frees an in-flight key on release, so the retry is claimed', async () => {
    await store.claim('t:a:k1', 'hash-1', LEASE);
    await store.release('t:a:k1');
    await expect(store.claim('t:a:k1', 'hash-1', LEASE)).resolves.toEqual({ state: 'claimed' });
  });

  it('never deletes a completed record on release', async () => {
    await store.claim('t:a:k1', 'hash-1', LEASE);
    await store.complete('t:a:k1', 'hash-1', response, TTL);
    await store.release('t:a:k1');
    await expect(store.claim('t:a:k1', 'hash-1', LEASE)).resolves.toEqual({
      state: 'completed',
      sameBody: true,
      response,
    });
  });

  it('accepts the release of a key it does not know', async () => {
    await expect(store.release('t:a:never-claimed')).resolves.toBeUndefined();
    await expect(store.claim('t:a:never-claimed', 'hash-1', LEASE)).resolves.toEqual({ state: 'claimed' });
  });

  it('lets an in-flight claim expire after its lease', async () => {
    await store.claim('t:a:k1', 'hash-1', 100);
    await expect(store.claim('t:a:k1', 'hash-1', 100)).resolves.toEqual({ state: 'in_flight', sameBody: true });
    await sleep(150);
    await expect(store.claim('t:a:k1', 'hash-1', LEASE)).resolves.toEqual({ state: 'claimed' });
  });

  it('forgets a completed record after its ttl', async () => {
    await store.claim('t:a:k1', 'hash-1', LEASE);
    await store.complete('t:a:k1', 'hash-1', response, 100);
    await expect(store.claim('t:a:k1', 'hash-1', LEASE)).resolves.toMatchObject({ state: 'completed' });
    await sleep(150);
    await expect(store.claim('t:a:k1', 'hash-1', LEASE)).resolves.toEqual({ state: 'claimed' });
  });

  it('keeps a completed record for its ttl, not the lease', async () => {
    await store.claim('t:a:k1', 'hash-1', 100);
    await store.complete('t:a:k1', 'hash-1', response, TTL);
    await sleep(150);
    await expect(store.claim('t:a:k1', 'hash-1', LEASE)).resolves.toMatchObject({ state: 'completed' });
  });

  it('grants exactly one of 50 concurrent claims of one key', async () => {
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => store.claim('t:a:race', i % 2 === 0 ? 'hash-1' : 'hash-2', LEASE)),
    );
    expect(results.filter((r) => r.state === 'claimed')).toHaveLength(1);
    expect(results.filter((r) => r.state === 'in_flight')).toHaveLength(49);
  });
});

describe('RedisIdempotencyStore across processes', () => {
  it('grants exactly one claim when five connections race for one key', async () => {
    const admin = await requireRedis();
    const prefix = uniquePrefix('idem-multi');
    const connections = Array.from({ length: 5 }, () => new RedisConnection(REDIS_TEST_URL, 1000, silentLogger()));
    try {
      await Promise.all(connections.map((c) => c.start()));
      const stores = connections.map((c) => new RedisIdempotencyStore(c.client, prefix));
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => stores[i % stores.length].claim('t:a:race', 'hash-1', LEASE)),
      );
      expect(results.filter((r) => r.state === 'claimed')).toHaveLength(1);
      expect(results.filter((r) => r.state === 'in_flight')).toHaveLength(49);
    } finally {
      await Promise.all(connections.map((c) => c.close()));
      await deleteKeys(admin, prefix);
      admin.disconnect();
    }
  });
});
