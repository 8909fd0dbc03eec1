/**
 * One suite, every IdempotencyStore: the embedded (memory) store and the Redis store, on one
 * Redis (REDIS_TEST_URL, 127.0.0.1:6379, a unique prefix) and on a three-master Redis Cluster
 * this file starts, must behave the same.
 */
import { MemoryIdempotencyStore } from '../../src/idempotency/memory';
import { RedisIdempotencyStore } from '../../src/idempotency/redis';
import type { CompletedResponse, IdempotencyStore } from '../../src/idempotency/store';
import { TestClock } from '../helpers/clock';
import { uniquePrefix } from '../helpers/redis';
import { redisSetups, watchBatchedScript, type RedisSetup } from '../helpers/redis-setups';
import type { RedisConnection } from '../../src/redis/connection';

const setups = redisSetups();

interface Backend {
  store: IdempotencyStore;
  /**
   * Lets `ms` pass for the store's expiries. Memory: its clock moves. Redis: every key's time
   * to live is shortened by `ms` (PEXPIRE, or DEL once it is up). Leases and windows in these
   * tests are long, so nothing expires by itself between two calls, however slow the machine.
   */
  elapse(ms: number): Promise<void>;
  cleanup(): Promise<void>;
}

const backends: Array<[string, () => Promise<Backend>]> = [
  [
    'memory',
    async () => {
      const clock = new TestClock();
      const store = new MemoryIdempotencyStore({ maxKeys: 10_000, now: clock.now });
      await store.start();
      return { store, elapse: async (ms) => clock.advance(ms), cleanup: () => store.close() };
    },
  ],
  ...setups.map((setup): [string, () => Promise<Backend>] => [
    setup.name,
    async () => {
      const prefix = uniquePrefix('idem');
      const connection = await setup.connect();
      const store = new RedisIdempotencyStore(connection.client, prefix);
      await store.start();
      return {
        store,
        elapse: (ms) => setup.elapse(prefix, ms),
        cleanup: async () => {
          await store.close();
          await connection.close();
          await setup.deleteKeys(prefix);
          expect(await setup.keysUnder(prefix)).toEqual([]);
        },
      };
    },
  ]),
];

const response: CompletedResponse = { status: 202, eventId: 'evt-1', ackHash: 'a'.repeat(64) };
const LEASE = 30_000;
const TTL = 60_000;
/** Time left on the clock when a test checks a key is still there: far more than two round trips take. */
const MARGIN = 10_000;
const OWNER = 'owner-1';

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
    await expect(store.claim('t:a:k1', OWNER, 'hash-1', LEASE)).resolves.toEqual({ state: 'claimed' });
  });

  it('reports a second claim with the same body as in flight, same body', async () => {
    await store.claim('t:a:k1', OWNER, 'hash-1', LEASE);
    await expect(store.claim('t:a:k1', OWNER, 'hash-1', LEASE)).resolves.toEqual({ state: 'in_flight', sameBody: true });
  });

  it('reports a second claim with another body as in flight, other body', async () => {
    await store.claim('t:a:k1', OWNER, 'hash-1', LEASE);
    await expect(store.claim('t:a:k1', OWNER, 'hash-2', LEASE)).resolves.toEqual({ state: 'in_flight', sameBody: false });
  });

  it('keeps keys apart', async () => {
    await store.claim('t:a:k1', OWNER, 'hash-1', LEASE);
    await expect(store.claim('t:a:k2', OWNER, 'hash-1', LEASE)).resolves.toEqual({ state: 'claimed' });
    await expect(store.claim('t:b:k1', OWNER, 'hash-1', LEASE)).resolves.toEqual({ state: 'claimed' });
  });

  it('replays the completed response', async () => {
    await store.claim('t:a:k1', OWNER, 'hash-1', LEASE);
    await store.complete('t:a:k1', OWNER, 'hash-1', response, TTL);
    await expect(store.claim('t:a:k1', OWNER, 'hash-1', LEASE)).resolves.toEqual({
      state: 'completed',
      sameBody: true,
      response,
    });
    await expect(store.claim('t:a:k1', OWNER, 'hash-2', LEASE)).resolves.toEqual({
      state: 'completed',
      sameBody: false,
      response,
    });
  });

  it('keeps only status, event id and the acknowledgement hash of a completion, whatever else the caller passes', async () => {
    // A chat acknowledgement arrives with `body: null`; an old caller could pass a whole body.
    const bulky = { ...response, body: { blob: 'x'.repeat(100_000) } } as CompletedResponse;
    await store.claim('t:a:big', OWNER, 'hash-1', LEASE);
    await store.complete('t:a:big', OWNER, 'hash-1', bulky, TTL);
    await expect(store.claim('t:a:big', OWNER, 'hash-1', LEASE)).resolves.toEqual({ state: 'completed', sameBody: true, response });
    const chat = { status: 200, body: null, eventId: 'evt-chat' } as CompletedResponse;
    await store.claim('t:a:chat', OWNER, 'h', LEASE);
    await store.complete('t:a:chat', OWNER, 'h', chat, TTL);
    await expect(store.claim('t:a:chat', OWNER, 'h', LEASE)).resolves.toEqual({
      state: 'completed',
      sameBody: true,
      response: { status: 200, eventId: 'evt-chat' },
    });
  });

  it('frees an in-flight key on release, so the retry is claimed', async () => {
    await store.claim('t:a:k1', OWNER, 'hash-1', LEASE);
    await store.release('t:a:k1', OWNER);
    await expect(store.claim('t:a:k1', OWNER, 'hash-1', LEASE)).resolves.toEqual({ state: 'claimed' });
  });

  it('never deletes a completed record on release', async () => {
    await store.claim('t:a:k1', OWNER, 'hash-1', LEASE);
    await store.complete('t:a:k1', OWNER, 'hash-1', response, TTL);
    await store.release('t:a:k1', OWNER);
    await expect(store.claim('t:a:k1', OWNER, 'hash-1', LEASE)).resolves.toEqual({
      state: 'completed',
      sameBody: true,
      response,
    });
  });

  it('accepts the release of a key it does not know', async () => {
    await expect(store.release('t:a:never-claimed', OWNER)).resolves.toBeUndefined();
    await expect(store.claim('t:a:never-claimed', OWNER, 'hash-1', LEASE)).resolves.toEqual({ state: 'claimed' });
  });

  it('lets an in-flight claim expire after its lease', async () => {
    await store.claim('t:a:k1', OWNER, 'hash-1', LEASE);
    await expect(store.claim('t:a:k1', OWNER, 'hash-1', LEASE)).resolves.toEqual({ state: 'in_flight', sameBody: true });
    await backend.elapse(LEASE - MARGIN);
    await expect(store.claim('t:a:k1', OWNER, 'hash-1', LEASE)).resolves.toEqual({ state: 'in_flight', sameBody: true });
    await backend.elapse(MARGIN);
    await expect(store.claim('t:a:k1', OWNER, 'hash-1', LEASE)).resolves.toEqual({ state: 'claimed' });
  });

  it('forgets a completed record after its ttl', async () => {
    await store.claim('t:a:k1', OWNER, 'hash-1', LEASE);
    await store.complete('t:a:k1', OWNER, 'hash-1', response, TTL);
    await expect(store.claim('t:a:k1', OWNER, 'hash-1', LEASE)).resolves.toMatchObject({ state: 'completed' });
    await backend.elapse(TTL - MARGIN);
    await expect(store.claim('t:a:k1', OWNER, 'hash-1', LEASE)).resolves.toMatchObject({ state: 'completed' });
    await backend.elapse(MARGIN);
    await expect(store.claim('t:a:k1', OWNER, 'hash-1', LEASE)).resolves.toEqual({ state: 'claimed' });
  });

  it('keeps a completed record for its ttl, not the lease', async () => {
    await store.claim('t:a:k1', OWNER, 'hash-1', LEASE);
    await store.complete('t:a:k1', OWNER, 'hash-1', response, TTL);
    await backend.elapse(LEASE + MARGIN);
    await expect(store.claim('t:a:k1', OWNER, 'hash-1', LEASE)).resolves.toMatchObject({ state: 'completed' });
  });

  it('grants exactly one of 50 concurrent claims of one key', async () => {
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => store.claim('t:a:race', OWNER, i % 2 === 0 ? 'hash-1' : 'hash-2', LEASE)),
    );
    expect(results.filter((r) => r.state === 'claimed')).toHaveLength(1);
    expect(results.filter((r) => r.state === 'in_flight')).toHaveLength(49);
  });
});

/** A Redis store on a connection of its own under a fresh prefix; its keys are deleted afterwards. */
async function withRedisStore(
  setup: RedisSetup,
  label: string,
  use: (store: RedisIdempotencyStore, prefix: string, connection: RedisConnection) => Promise<void>,
): Promise<void> {
  const prefix = uniquePrefix(label);
  const connection = await setup.connect();
  try {
    await use(new RedisIdempotencyStore(connection.client, prefix), prefix, connection);
  } finally {
    await connection.close();
    await setup.deleteKeys(prefix);
  }
}

describe.each(setups.map((setup) => [setup.name, setup] as const))('RedisIdempotencyStore expiry: %s', (_name, setup) => {
  it('a claim expires after its lease and a completed record after its ttl, as Redis key expiries', async () => {
    await withRedisStore(setup, 'idem-ttl', async (store, prefix) => {
      const ttlsWithin = async (max: number) => {
        const ttls = [...(await setup.keyTtls(prefix)).values()];
        expect(ttls.length).toBeGreaterThan(0);
        // Set to exactly `max` by the store; MARGIN allows for the time the round trips took.
        for (const ttl of ttls) expect(ttl > max - MARGIN && ttl <= max).toBe(true);
      };
      await store.claim('t:a:k1', OWNER, 'hash-1', LEASE);
      await ttlsWithin(LEASE);
      await store.complete('t:a:k1', OWNER, 'hash-1', response, TTL);
      await ttlsWithin(TTL);
    });
  });
});

describe.each(setups.map((setup) => [setup.name, setup] as const))('RedisIdempotencyStore claims of one turn: %s', (_name, setup) => {
  it('go in one script call (one per key on a cluster), each answered as if sent alone, in order', async () => {
    await withRedisStore(setup, 'idem-turn', async (store, _prefix, connection) => {
      await store.claim('t:a:done', OWNER, 'hash-1', LEASE);
      await store.complete('t:a:done', OWNER, 'hash-1', response, TTL);
      const script = watchBatchedScript(connection.client, connection.isCluster, 'igwIdempotencyClaim', 'igwIdempotencyClaimOne');
      const results = await Promise.all([
        store.claim('t:a:new', OWNER, 'hash-1', LEASE),
        store.claim('t:a:new', 'owner-2', 'hash-2', LEASE),
        store.claim('t:a:done', 'owner-2', 'hash-1', LEASE),
      ]);
      expect(results).toEqual([
        { state: 'claimed' },
        { state: 'in_flight', sameBody: false },
        { state: 'completed', sameBody: true, response },
      ]);
      script.expectOneCall();
    });
  });
});

describe.each(setups.map((setup) => [setup.name, setup] as const))('RedisIdempotencyStore across processes: %s', (_name, setup) => {
  it('grants exactly one claim when five connections race for one key', async () => {
    const prefix = uniquePrefix('idem-multi');
    const connections = await Promise.all(Array.from({ length: 5 }, () => setup.connect()));
    try {
      const stores = connections.map((c) => new RedisIdempotencyStore(c.client, prefix));
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => stores[i % stores.length].claim('t:a:race', OWNER, 'hash-1', LEASE)),
      );
      expect(results.filter((r) => r.state === 'claimed')).toHaveLength(1);
      expect(results.filter((r) => r.state === 'in_flight')).toHaveLength(49);
    } finally {
      await Promise.all(connections.map((c) => c.close()));
      await setup.deleteKeys(prefix);
    }
  });
});
