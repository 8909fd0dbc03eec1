/**
 * The Redis setups the Redis suites run against, so one suite covers all of them:
 * - `redis`: the shared server at REDIS_TEST_URL (keys under a unique prefix per test);
 * - `redis-cluster`: a three-master Redis Cluster with a password, started by the test file
 *   on first use and stopped after its last test (see redis-cluster.ts).
 *
 * Call redisSetups() at the top of a test file: it registers the teardown.
 */
import { Cluster } from 'ioredis';
import type { Logger } from 'pino';
import { RedisConnection, type RedisClient } from '../../src/redis/connection';
import { REDIS_TEST_URL, requireRedis, silentLogger } from './redis';
import { RedisClusterProcess } from './redis-cluster';
import { waitUntil } from './wait';

export interface RedisSetup {
  name: 'redis' | 'redis-cluster';
  /**
   * A started connection, as the gateway makes it for this setup, once it is ready (a cluster
   * client has its slot table): the gateway's start() waits only a moment for that. The command
   * timeout (default 5 s) is generous: a test process starved of CPU reads a reply late, and
   * a socket timeout would tear the connection down under a test that is not about timeouts.
   */
  connect(timeoutMs?: number, logger?: Logger): Promise<RedisConnection>;
  /** A client for the test's own reads and writes; closed after the file. */
  admin(): Promise<RedisClient>;
  /** Every key under the prefix (on every master of a cluster). */
  keysUnder(prefix: string): Promise<string[]>;
  deleteKeys(prefix: string): Promise<number>;
  /**
   * Lets `ms` pass for every key under the prefix, as far as their expiry goes: each key's
   * time to live is shortened by `ms` (PEXPIRE), and a key whose time is up is deleted, as
   * Redis would (see elapseKeys in redis.ts). Fails on a key without an expiry.
   */
  elapse(prefix: string, ms: number): Promise<void>;
  /** The time to live of every key under the prefix in ms (-1: none), by key. */
  keyTtls(prefix: string): Promise<Map<string, number>>;
  /** Settings of a gateway process (dist/main.js) using this setup. */
  gatewayEnv(): Promise<Record<string, string>>;
}

const CONNECTION_TIMEOUT_MS = 5000;

/** Starts the connection and waits until it is ready; closes it when it never gets there. */
export async function readyConnection(connection: RedisConnection): Promise<RedisConnection> {
  try {
    await connection.start();
    await waitUntil(() => connection.isReady, 'the test connection to Redis to be ready');
    return connection;
  } catch (error) {
    await connection.close();
    throw error;
  }
}

/** A password for the test cluster; nothing secret. */
export const CLUSTER_TEST_PASSWORD = 'igw-cluster-test-password-4d1f';

export function redisSetups(): RedisSetup[] {
  const single = singleRedis();
  const cluster = redisCluster();
  afterAll(async () => {
    await single.close();
    await cluster.close();
  });
  return [single.setup, cluster.setup];
}

/** Each setup as a describe.each row: [name, setup]. */
export function redisSetupRows(): Array<[string, RedisSetup]> {
  return redisSetups().map((setup) => [setup.name, setup]);
}

function singleRedis(): { setup: RedisSetup; close(): Promise<void> } {
  let admin: Promise<RedisClient> | undefined;
  const setup: RedisSetup = {
    name: 'redis',
    async connect(timeoutMs = CONNECTION_TIMEOUT_MS, logger = silentLogger()) {
      await setup.admin(); // fails with how to start Redis when it is not there
      return readyConnection(new RedisConnection({ target: REDIS_TEST_URL, timeoutMs }, logger));
    },
    admin: () => (admin ??= requireRedis()),
    keysUnder: async (prefix) => scanKeys(await setup.admin(), prefix),
    deleteKeys: async (prefix) => deleteAll(await setup.admin(), prefix),
    elapse: async (prefix, ms) => elapseAll(await setup.admin(), prefix, ms),
    keyTtls: async (prefix) => ttlsOf(await setup.admin(), prefix),
    gatewayEnv: async () => {
      await setup.admin();
      return { REDIS_URL: REDIS_TEST_URL };
    },
  };
  return {
    setup,
    close: async () => {
      if (admin) (await admin).disconnect();
    },
  };
}

function redisCluster(): { setup: RedisSetup; close(): Promise<void> } {
  let started: Promise<RedisClusterProcess> | undefined;
  let admin: Promise<Cluster> | undefined;
  const cluster = () => (started ??= RedisClusterProcess.start({ password: CLUSTER_TEST_PASSWORD }));
  const setup: RedisSetup = {
    name: 'redis-cluster',
    async connect(timeoutMs = CONNECTION_TIMEOUT_MS, logger = silentLogger()) {
      return readyConnection(new RedisConnection({ target: (await cluster()).target, timeoutMs }, logger));
    },
    admin: () => (admin ??= cluster().then((running) => running.client())),
    keysUnder: async (prefix) => scanKeys(await setup.admin(), prefix),
    deleteKeys: async (prefix) => deleteAll(await setup.admin(), prefix),
    elapse: async (prefix, ms) => elapseAll(await setup.admin(), prefix, ms),
    keyTtls: async (prefix) => ttlsOf(await setup.admin(), prefix),
    gatewayEnv: async () => {
      const running = await cluster();
      return { REDIS_CLUSTER_NODES: running.nodesSetting, REDIS_PASSWORD: CLUSTER_TEST_PASSWORD };
    },
  };
  return {
    setup,
    close: async () => {
      if (admin) (await admin).disconnect();
      if (started) await (await started).stop();
    },
  };
}

/** SCAN of every master of a cluster (a key lives on one), or of the one server. */
async function scanKeys(client: RedisClient, prefix: string): Promise<string[]> {
  const pattern = `${prefix.replace(/[*?[\]\\{}]/g, (c) => `\\${c}`)}*`;
  const servers = client instanceof Cluster ? await mastersOf(client) : [client];
  const found: string[] = [];
  for (const server of servers) {
    let cursor = '0';
    do {
      const [next, keys] = await server.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
      cursor = next;
      found.push(...keys);
    } while (cursor !== '0');
  }
  return found;
}

async function mastersOf(cluster: Cluster) {
  if (cluster.status === 'wait') await cluster.connect();
  if (cluster.status !== 'ready') await new Promise((resolve) => cluster.once('ready', resolve));
  return cluster.nodes('master');
}

/** One DEL per key: keys of a cluster may live in different slots. */
async function deleteAll(client: RedisClient, prefix: string): Promise<number> {
  let deleted = 0;
  for (const key of await scanKeys(client, prefix)) deleted += await client.del(key);
  return deleted;
}

async function elapseAll(client: RedisClient, prefix: string, ms: number): Promise<void> {
  for (const key of await scanKeys(client, prefix)) {
    const left = await client.pttl(key);
    if (left === -2) continue; // gone meanwhile
    if (left === -1) throw new Error(`${key} has no expiry: it would never be forgotten`);
    if (left > ms) await client.pexpire(key, left - ms);
    else await client.del(key);
  }
}

async function ttlsOf(client: RedisClient, prefix: string): Promise<Map<string, number>> {
  const ttls = new Map<string, number>();
  for (const key of await scanKeys(client, prefix)) ttls.set(key, await client.pttl(key));
  return ttls;
}

/**
 * Watches a batched script's two commands (`many` keys, or `one` key) on a client. `expectOneCall`
 * then says that what was counted or claimed went as one `many` call on one Redis, and key by
 * key on a cluster (keys of other slots cannot share a script; auto-pipelining still writes
 * them together).
 */
export function watchBatchedScript(client: unknown, isCluster: boolean, many: string, one: string): { expectOneCall(): void } {
  const commands = client as Record<string, (...args: unknown[]) => unknown>;
  const manySpy = jest.spyOn(commands, many);
  const oneSpy = jest.spyOn(commands, one);
  return {
    expectOneCall() {
      if (isCluster) {
        expect(manySpy).not.toHaveBeenCalled();
        expect(oneSpy).toHaveBeenCalled();
      } else {
        expect(manySpy).toHaveBeenCalledTimes(1);
        expect(oneSpy).not.toHaveBeenCalled();
      }
    },
  };
}
