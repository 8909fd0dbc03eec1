/**
 * The registry's change subscription across a dropped Redis connection, through a proxy that
 * can cut connections and stop answering at one exact command: after a reconnect the
 * subscription is made again (changes reach B by pub/sub alone), and closing while that
 * SUBSCRIBE is unanswered rejects nothing unhandled (in the gateway an unhandled rejection
 * is fatal: a shutdown at that moment exited 1).
 */
import type Redis from 'ioredis';
import { RedisConnection } from '../../src/redis/connection';
import { RedisRegistry, registryKeys } from '../../src/registry/redis';
import type { StoredTrigger } from '../../src/registry/schemas';
import { REDIS_TEST_URL, deleteKeys, requireRedis, silentLogger, uniquePrefix, waitFor } from '../helpers/redis';
import { RedisFaultProxy } from '../helpers/redis-fault-proxy';
import { readyConnection } from '../helpers/redis-setups';

const TIMEOUT_MS = 300;
/** B never polls and trusts its cache for a minute: only pub/sub can tell it of a change. */
const PUBSUB_ONLY = { confirmEveryMs: 3_600_000, cacheTtlMs: 60_000 };

const trigger = (deployed: boolean): StoredTrigger => ({ workflowId: 'wf-1', workspaceId: 'ws-1', deployed, updatedAt: new Date().toISOString() });

describe('registry subscription across a dropped Redis connection', () => {
  let redis: Redis;
  let proxy: RedisFaultProxy;
  let prefix: string;
  const open: Array<{ connection: RedisConnection; registry: RedisRegistry }> = [];

  async function startRegistry(url: string, options = {}): Promise<{ connection: RedisConnection; registry: RedisRegistry }> {
    const connection = new RedisConnection({ target: url, timeoutMs: TIMEOUT_MS }, silentLogger());
    await readyConnection(connection);
    const registry = new RedisRegistry(connection, prefix, silentLogger(), options);
    await registry.start();
    await registry.confirm();
    const started = { connection, registry };
    open.push(started);
    return started;
  }

  /** How many connections are subscribed to the registry's change channel. */
  async function subscribers(): Promise<number> {
    const [, count] = (await redis.call('PUBSUB', 'NUMSUB', registryKeys(prefix, false).changes)) as [string, number];
    return Number(count);
  }

  beforeAll(async () => {
    redis = await requireRedis();
    const { hostname, port } = new URL(REDIS_TEST_URL);
    proxy = await RedisFaultProxy.start({ host: hostname, port: Number(port || 6379) });
  });

  beforeEach(() => {
    prefix = uniquePrefix('resubscribe');
  });

  afterEach(async () => {
    for (const { registry, connection } of open.splice(0)) {
      await registry.close();
      await connection.close();
    }
    await deleteKeys(redis, prefix);
  });

  afterAll(async () => {
    await proxy?.close();
    redis?.disconnect();
  });

  it('subscribes again after a reconnect: a change through A reaches B by pub/sub alone', async () => {
    const a = await startRegistry(REDIS_TEST_URL);
    const b = await startRegistry(proxy.url(), PUBSUB_ONLY);
    // start() resolves after 1 s at the latest, subscribed or not: on a busy machine B's SUBSCRIBE may still be on its way.
    await waitFor(async () => (await subscribers()) === 2, 10_000);

    proxy.cutConnections();
    await waitFor(async () => (await subscribers()) === 1, 5_000);
    await waitFor(async () => (await subscribers()) === 2 && b.connection.isReady, 10_000);

    await a.registry.triggers.put('orders', trigger(true));
    await waitFor(async () => (await b.registry.triggers.get('orders'))?.deployed === true, 5_000);
    await a.registry.triggers.put('orders', trigger(false));
    await waitFor(async () => (await b.registry.triggers.get('orders'))?.deployed === false, 5_000);
  });

  it('a SUBSCRIBE left unanswered until the socket timeout is sent again on the next connection', async () => {
    const b = await startRegistry(proxy.url(), PUBSUB_ONLY);
    await waitFor(async () => (await subscribers()) === 1, 10_000);
    const subscriber = b.connection.subscriber();
    proxy.holdFrom((args) => args[0].toUpperCase() === 'SUBSCRIBE');
    proxy.cutConnections();
    await waitFor(async () => (await subscribers()) === 0, 5_000);
    // Reconnects, its SUBSCRIBE stalls, the socket timeout cuts it, the next connection sends it again.
    await waitFor(async () => (await subscribers()) === 1 && subscriber.status === 'ready', 15_000);
    expect(proxy.held).toBe(1);
  });

  it('closing while the SUBSCRIBE after a reconnect is unanswered rejects nothing unhandled', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const b = await startRegistry(proxy.url(), PUBSUB_ONLY);
      const subscriber = b.connection.subscriber();
      proxy.holdFrom((args) => args[0].toUpperCase() === 'SUBSCRIBE');
      proxy.cutConnections();
      await waitFor(() => subscriber.status !== 'ready', 5_000);
      // Connected again and ready: its SUBSCRIBE is on the wire and will never be answered.
      await waitFor(() => subscriber.status === 'ready', 10_000);

      open.splice(open.indexOf(b), 1);
      await b.registry.close();
      await b.connection.close();
      // Closed for good: its queue has been flushed, every rejection of it has surfaced.
      await waitFor(() => subscriber.status === 'end', 5_000);
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
