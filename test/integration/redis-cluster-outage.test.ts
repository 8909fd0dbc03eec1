/**
 * A Redis Cluster master dies (no replica takes over): calls whose keys live on it fail within
 * the command timeout, like calls to a dead single Redis, and are never held or sent again;
 * keys on the other masters keep working.
 */
import { RedisIdempotencyStore } from '../../src/idempotency/redis';
import { RedisConnection } from '../../src/redis/connection';
import { capturingLogger, uniquePrefix } from '../helpers/redis';
import { RedisClusterProcess } from '../helpers/redis-cluster';
import { readyConnection } from '../helpers/redis-setups';

/**
 * Long next to what a busy machine adds to a call (issue 34). Timers never fire early, so a
 * call held or sent again after a timeout takes at least 2 × TIMEOUT_MS, however idle the machine.
 */
const TIMEOUT_MS = 2000;
/** A call on the dead master's keys fails after one timeout at most. */
const ONE_TIMEOUT_MS = 2 * TIMEOUT_MS;

describe('a Redis Cluster master dies', () => {
  let cluster: RedisClusterProcess;
  let connection: RedisConnection;
  const logs = capturingLogger();

  beforeAll(async () => {
    cluster = await RedisClusterProcess.start({ password: 'cluster-outage-pw-51a7' });
    connection = new RedisConnection({ target: cluster.target, timeoutMs: TIMEOUT_MS }, logs.logger);
    await readyConnection(connection); // start() waits a moment only; a busy machine can take longer to reach every node
  });

  afterAll(async () => {
    await connection?.close();
    await cluster?.stop();
  });

  it('calls on its keys fail within the timeout, calls on the other masters still work', async () => {
    const prefix = uniquePrefix('cluster-outage');
    const store = new RedisIdempotencyStore(connection.client, prefix);
    const keys = Array.from({ length: 30 }, (_, i) => `k-${i}`);
    for (const key of keys) await expect(store.claim(key, 'owner', 'h', 60_000)).resolves.toEqual({ state: 'claimed' });
    const byNode = await cluster.keysByNode(prefix);
    const onNode = (index: number) => keys.filter((key) => byNode[index].includes(`${prefix}idem:${key}`));
    const victim = byNode.findIndex((held) => held.length > 0);
    const survivor = byNode.findIndex((held, index) => index !== victim && held.length > 0);
    expect(victim).toBeGreaterThanOrEqual(0);
    expect(survivor).toBeGreaterThanOrEqual(0);

    await cluster.killNode(victim);
    for (const key of onNode(victim).slice(0, 3)) {
      const started = performance.now();
      await expect(store.claim(key, 'owner-2', 'h', 60_000)).rejects.toThrow();
      expect(performance.now() - started).toBeLessThan(ONE_TIMEOUT_MS);
    }
    for (const key of onNode(survivor)) {
      await expect(store.claim(key, 'owner-2', 'h', 60_000)).resolves.toEqual({ state: 'in_flight', sameBody: true });
    }
    expect(logs.text()).not.toContain('cluster-outage-pw-51a7');
  });
});
