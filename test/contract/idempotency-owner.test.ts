/**
 * Claims have owners (issue 10 item 5): only the request that holds a claim may complete or
 * release it, in the memory store and in the Redis store (one Redis and a cluster) alike.
 * "The lease ends" is made to happen at once: the memory store runs on a clock the test
 * moves; in Redis the key is deleted, which is what its PX expiry does when the lease runs out.
 */
import { MemoryIdempotencyStore } from '../../src/idempotency/memory';
import { RedisIdempotencyStore } from '../../src/idempotency/redis';
import type { CompletedResponse, IdempotencyStore } from '../../src/idempotency/store';
import { uniquePrefix } from '../helpers/redis';
import { redisSetups } from '../helpers/redis-setups';

const LEASE = 30_000;
const TTL = 60_000;

interface Backend {
  store: IdempotencyStore;
  /** The key's lease runs out now. */
  endLease(key: string): Promise<void>;
  cleanup(): Promise<void>;
}

const backends: Array<[string, () => Promise<Backend>]> = [
  [
    'memory',
    async () => {
      let now = 1_000_000;
      const store = new MemoryIdempotencyStore({ maxKeys: 1000, now: () => now });
      await store.start();
      return {
        store,
        endLease: async () => {
          now += LEASE + 1;
        },
        cleanup: () => store.close(),
      };
    },
  ],
  ...redisSetups().map((setup): [string, () => Promise<Backend>] => [
    setup.name,
    async () => {
      const prefix = uniquePrefix('idem-owner');
      const connection = await setup.connect();
      const store = new RedisIdempotencyStore(connection.client, prefix);
      const admin = await setup.admin();
      return {
        store,
        endLease: async (key) => {
          await admin.del(`${prefix}idem:${key}`);
        },
        cleanup: async () => {
          await connection.close();
          await setup.deleteKeys(prefix);
        },
      };
    },
  ]),
];

const ack = (eventId: string): CompletedResponse => ({ status: 200, eventId, ackHash: `hash-of-${eventId}` });

describe.each(backends)('IdempotencyStore claim owners: %s', (_name, create) => {
  let backend: Backend;
  let store: IdempotencyStore;

  beforeEach(async () => {
    backend = await create();
    store = backend.store;
  });

  afterEach(async () => {
    await backend.cleanup();
  });

  it('a release by anyone but the owner leaves the claim in flight', async () => {
    await store.claim('k', 'owner-a', 'h', LEASE);
    await store.release('k', 'owner-b');
    await expect(store.claim('k', 'owner-c', 'h', LEASE)).resolves.toEqual({ state: 'in_flight', sameBody: true });
    await store.release('k', 'owner-a');
    await expect(store.claim('k', 'owner-c', 'h', LEASE)).resolves.toEqual({ state: 'claimed' });
  });

  it("a completion by anyone but the owner writes nothing; the owner's own lands", async () => {
    await store.claim('k', 'owner-a', 'h', LEASE);
    await expect(store.complete('k', 'owner-b', 'h', ack('evt-b'), TTL)).resolves.toBe(false);
    await expect(store.claim('k', 'owner-c', 'h', LEASE)).resolves.toEqual({ state: 'in_flight', sameBody: true });
    await expect(store.complete('k', 'owner-a', 'h', ack('evt-a'), TTL)).resolves.toBe(true);
    await expect(store.claim('k', 'owner-c', 'h', LEASE)).resolves.toEqual({
      state: 'completed',
      sameBody: true,
      response: ack('evt-a'),
    });
  });

  it("after A's lease ended and B took the key, A's release and completion leave B's claim alone", async () => {
    await store.claim('k', 'owner-a', 'h', LEASE);
    await backend.endLease('k');
    await expect(store.claim('k', 'owner-b', 'h', LEASE)).resolves.toEqual({ state: 'claimed' });

    await store.release('k', 'owner-a');
    await expect(store.claim('k', 'owner-c', 'h', LEASE)).resolves.toEqual({ state: 'in_flight', sameBody: true });
    await expect(store.complete('k', 'owner-a', 'h', ack('evt-a'), TTL)).resolves.toBe(false);
    await expect(store.claim('k', 'owner-c', 'h', LEASE)).resolves.toEqual({ state: 'in_flight', sameBody: true });

    await expect(store.complete('k', 'owner-b', 'h', ack('evt-b'), TTL)).resolves.toBe(true);
    await expect(store.complete('k', 'owner-a', 'h', ack('evt-a'), TTL)).resolves.toBe(false);
    await expect(store.claim('k', 'owner-c', 'h', LEASE)).resolves.toMatchObject({ state: 'completed', response: ack('evt-b') });
  });

  it("after A's lease ended and nobody took the key, A's completion is still recorded (the event is published)", async () => {
    await store.claim('k', 'owner-a', 'h', LEASE);
    await backend.endLease('k');
    await expect(store.complete('k', 'owner-a', 'h', ack('evt-a'), TTL)).resolves.toBe(true);
    await expect(store.claim('k', 'owner-b', 'h', LEASE)).resolves.toMatchObject({ state: 'completed', response: ack('evt-a') });
  });

  it('the same completion sent twice (its first reply was lost) is a success both times', async () => {
    await store.claim('k', 'owner-a', 'h', LEASE);
    await expect(store.complete('k', 'owner-a', 'h', ack('evt-a'), TTL)).resolves.toBe(true);
    await expect(store.complete('k', 'owner-a', 'h', ack('evt-a'), TTL)).resolves.toBe(true);
    await expect(store.claim('k', 'owner-b', 'h', LEASE)).resolves.toMatchObject({ state: 'completed', response: ack('evt-a') });
  });

  it("the owner's release after its completion keeps the completed record", async () => {
    await store.claim('k', 'owner-a', 'h', LEASE);
    await store.complete('k', 'owner-a', 'h', ack('evt-a'), TTL);
    await store.release('k', 'owner-a');
    await expect(store.claim('k', 'owner-b', 'h', LEASE)).resolves.toMatchObject({ state: 'completed', response: ack('evt-a') });
  });
});
