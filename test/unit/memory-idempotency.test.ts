/**
 * The embedded idempotency store is bounded (issue 10 item 9): at most
 * IDEMPOTENCY_MEMORY_MAX_KEYS keys, the least recently used forgotten first.
 */
import { configSchema } from '../../src/config/schema';
import { createContainer } from '../../src/container';
import { MemoryIdempotencyStore } from '../../src/idempotency/memory';
import { silentLogger } from '../helpers/redis';

const LEASE = 30_000;
const TTL = 60_000;
const ACK = { status: 200, body: null, eventId: 'e' };

describe('MemoryIdempotencyStore bound', () => {
  it('keeps at most maxKeys keys and forgets the least recently used first', async () => {
    const store = new MemoryIdempotencyStore({ maxKeys: 3 });
    for (const key of ['a', 'b', 'c']) await store.claim(key, `owner-${key}`, 'h', LEASE);
    await store.complete('a', 'owner-a', 'h', ACK, TTL);
    // A retry of `a` looks it up: `a` is now the most recently used, `b` the least.
    await expect(store.claim('a', 'retry', 'h', LEASE)).resolves.toMatchObject({ state: 'completed' });

    await store.claim('d', 'owner-d', 'h', LEASE); // full: `b` is forgotten
    await expect(store.claim('a', 'retry', 'h', LEASE)).resolves.toMatchObject({ state: 'completed' });
    await expect(store.claim('c', 'retry', 'h', LEASE)).resolves.toEqual({ state: 'in_flight', sameBody: true });
    await expect(store.claim('d', 'retry', 'h', LEASE)).resolves.toEqual({ state: 'in_flight', sameBody: true });
    await expect(store.claim('b', 'retry', 'h', LEASE)).resolves.toEqual({ state: 'claimed' });
  });

  it('stays at its bound under a stream of unique keys', async () => {
    const store = new MemoryIdempotencyStore({ maxKeys: 1000 });
    for (let i = 0; i < 5000; i += 1) {
      await store.claim(`k${i}`, `o${i}`, 'h', LEASE);
      await store.complete(`k${i}`, `o${i}`, 'h', ACK, TTL);
    }
    // The newest 1000 are kept (looking them up does not evict anything)...
    for (let i = 4000; i < 5000; i += 1) {
      await expect(store.claim(`k${i}`, 'probe', 'h', LEASE)).resolves.toMatchObject({ state: 'completed' });
    }
    // ...and the one before them is forgotten, like every older one.
    await expect(store.claim('k3999', 'probe', 'h', LEASE)).resolves.toEqual({ state: 'claimed' });
    await expect(store.claim('k0', 'probe', 'h', LEASE)).resolves.toEqual({ state: 'claimed' });
  });

  it('still lets entries expire with their lease or window', async () => {
    let now = 1_000_000;
    const store = new MemoryIdempotencyStore({ maxKeys: 10, now: () => now });
    await store.claim('leased', 'o1', 'h', 100);
    await store.claim('done', 'o2', 'h', 100);
    await store.complete('done', 'o2', 'h', ACK, 1000);
    now += 101;
    await expect(store.claim('leased', 'o3', 'h', LEASE)).resolves.toEqual({ state: 'claimed' });
    await expect(store.claim('done', 'o3', 'h', LEASE)).resolves.toMatchObject({ state: 'completed' });
    now += 900;
    await expect(store.claim('done', 'o4', 'h', LEASE)).resolves.toEqual({ state: 'claimed' });
  });
});

describe('MemoryIdempotencyStore byte bound', () => {
  it('forgets the least recently used keys once their bytes pass maxBytes, however few they are', async () => {
    const store = new MemoryIdempotencyStore({ maxKeys: 100_000, maxBytes: 100_000 });
    for (let i = 0; i < 1000; i += 1) {
      await store.claim(`k${i}`, `o${i}`, 'h'.repeat(64), LEASE);
      await store.complete(`k${i}`, `o${i}`, 'h'.repeat(64), { status: 200, eventId: `e${i}`, ackHash: 'a'.repeat(64) }, LEASE);
    }
    await expect(store.claim('k0', 'probe', 'h', LEASE)).resolves.toEqual({ state: 'claimed' });
    await expect(store.claim('k999', 'probe', 'h'.repeat(64), LEASE)).resolves.toMatchObject({ state: 'completed', sameBody: true });
  });

  it('keeps a completion the same small size whatever acknowledgement body the caller passes', async () => {
    const store = new MemoryIdempotencyStore({ maxKeys: 100_000, maxBytes: 1_048_576 });
    const bulky = { status: 200, eventId: 'e', body: { blob: 'x'.repeat(900_000) } };
    for (let i = 0; i < 300; i += 1) {
      await store.claim(`k${i}`, `o${i}`, 'h', LEASE);
      await store.complete(`k${i}`, `o${i}`, 'h', bulky, LEASE);
    }
    // 300 keys of a few hundred bytes each fit in 1 MiB: none was forgotten.
    for (const i of [0, 299]) {
      await expect(store.claim(`k${i}`, 'probe', 'h', LEASE)).resolves.toEqual({ state: 'completed', sameBody: true, response: { status: 200, eventId: 'e' } });
    }
  });
});

describe('IDEMPOTENCY_MEMORY_MAX_KEYS', () => {
  it('defaults to 100000 and refuses values under 1000', () => {
    expect(configSchema.parse({}).IDEMPOTENCY_MEMORY_MAX_KEYS).toBe(100_000);
    expect(configSchema.safeParse({ IDEMPOTENCY_MEMORY_MAX_KEYS: '999' }).success).toBe(false);
  });

  it('bounds the store the container builds in embedded mode', async () => {
    const config = configSchema.parse({ IDEMPOTENCY_MEMORY_MAX_KEYS: '1000' });
    const container = createContainer(config, silentLogger());
    const store = container.deps.idempotency;
    try {
      for (let i = 0; i <= 1000; i += 1) await store.claim(`k${i}`, `o${i}`, 'h', LEASE);
      await expect(store.claim('k0', 'probe', 'h', LEASE)).resolves.toEqual({ state: 'claimed' });
      await expect(store.claim('k1000', 'probe', 'h', LEASE)).resolves.toEqual({ state: 'in_flight', sameBody: true });
    } finally {
      await container.close();
    }
  });
});
