/**
 * Completions asked for together (a batch's acknowledgements) go to Redis as one script call
 * on one Redis, one call per key on a cluster: each key still gets its own answer, a key
 * another owner holds is left alone, and a Redis that is down fails every one of them.
 */
import type { CompletedResponse } from '../../src/idempotency/store';
import { RedisIdempotencyStore } from '../../src/idempotency/redis';
import { RedisConnection } from '../../src/redis/connection';
import { silentLogger, uniquePrefix } from '../helpers/redis';
import { redisSetupRows, type RedisSetup } from '../helpers/redis-setups';

const response = (eventId: string): CompletedResponse => ({ status: 200, eventId, ackHash: 'a'.repeat(64) });

describe.each(redisSetupRows())('Redis idempotency completions together: %s', (_name, setup: RedisSetup) => {
  let prefix: string;
  let connection: RedisConnection;
  let store: RedisIdempotencyStore;

  beforeEach(async () => {
    prefix = uniquePrefix('idc');
    connection = await setup.connect();
    store = new RedisIdempotencyStore(connection.client, prefix);
  });

  afterEach(async () => {
    await connection.close();
    await setup.deleteKeys(prefix);
  });

  it('answers each completion of a batch for its own key', async () => {
    const keys = Array.from({ length: 12 }, (_, i) => `k-${i}`);
    for (const key of keys) expect(await store.claim(key, `owner-${key}`, `hash-${key}`, 30_000)).toEqual({ state: 'claimed' });
    // k-0 is completed by another owner: its completion is refused, the others written.
    const written = await Promise.all(
      keys.map((key, i) => store.complete(key, i === 0 ? 'someone-else' : `owner-${key}`, `hash-${key}`, response(`evt-${key}`), 60_000)),
    );
    expect(written).toEqual(keys.map((_, i) => i !== 0));
    // Written again (a retry whose reply was lost), and a key nobody claimed: both written.
    expect(await Promise.all([store.complete('k-1', 'owner-k-1', 'hash-k-1', response('evt-k-1'), 60_000), store.complete('free', 'o', 'h', response('evt-free'), 60_000)])).toEqual([true, true]);
    const claims = await Promise.all(keys.map((key) => store.claim(key, 'late', `hash-${key}`, 30_000)));
    expect(claims[0]).toEqual({ state: 'in_flight', sameBody: true });
    claims.slice(1).forEach((claim, i) => expect(claim).toEqual({ state: 'completed', sameBody: true, response: response(`evt-${keys[i + 1]}`) }));
    const ttls = await setup.keyTtls(prefix);
    expect(ttls.get(`${prefix}idem:k-5`)).toBeGreaterThan(55_000);
  });

  it('fails every completion of the batch while Redis is unreachable', async () => {
    const down = new RedisConnection(
      setup.name === 'redis' ? { target: 'redis://127.0.0.1:1', timeoutMs: 200 } : { target: { nodes: [{ host: '127.0.0.1', port: 1 }], tls: false }, timeoutMs: 200 },
      silentLogger(),
    );
    await down.start();
    try {
      const unreachable = new RedisIdempotencyStore(down.client, prefix);
      const results = await Promise.allSettled(['a', 'b', 'c'].map((key) => unreachable.complete(key, 'o', 'h', response(key), 60_000)));
      expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    } finally {
      await down.close();
    }
  });
});
