/**
 * The built gateway on a Redis Cluster of three masters over TLS with a password
 * (REDIS_CLUSTER_NODES=rediss://…, REDIS_PASSWORD, REDIS_TLS_CA_FILE), as managed Redis
 * services in cluster mode run: it serves, dedupes and rate-limits, keeps the registry's keys
 * in one slot (`{registry}`) while idempotency and rate-limit keys spread over the masters, and
 * never logs the password.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { admin, postWebhook, sinkRecords, timedFetch } from '../helpers/gateway-client';
import { uniquePrefix, waitFor } from '../helpers/redis';
import { RedisClusterProcess } from '../helpers/redis-cluster';
import { makeTestPki } from '../helpers/secured-redis';
import { startGateway, type RunningGateway } from '../helpers/server';
import { tempDir, writeJson } from '../helpers/tmp';

const PASSWORD = 'cluster-tls-pw-6b2e91d4c7';
const ADMIN = 'cluster-admin-token-0c5d';

describe('a gateway on a Redis Cluster over TLS with a password', () => {
  const tmp = tempDir('igw-cluster-tls-');
  const prefix = uniquePrefix('cluster-gw');
  const eventsDir = join(tmp.dir, 'events');
  let cluster: RedisClusterProcess;
  let gateway: RunningGateway;

  beforeAll(async () => {
    const pki = makeTestPki(tmp.dir);
    cluster = await RedisClusterProcess.start({ password: PASSWORD, pki });
    const triggersFile = writeJson(tmp.dir, 'triggers.json', {
      triggers: {
        orders: { workflowId: 'wf-orders', workspaceId: 'ws-1', deployed: true, rateLimit: { limit: 1000, windowSeconds: 60 } },
      },
    });
    gateway = await startGateway({
      REDIS_CLUSTER_NODES: cluster.nodesSetting,
      REDIS_PASSWORD: PASSWORD,
      REDIS_TLS_CA_FILE: pki.caFile,
      REDIS_PREFIX: prefix,
      TRIGGERS_FILE: triggersFile,
      ADMIN_TOKEN: ADMIN,
      EVENTS_DIR: eventsDir,
      LOG_LEVEL: 'debug',
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await cluster?.stop();
    tmp.cleanup();
  });

  it('is ready and reports redis up', async () => {
    await waitFor(async () => (await timedFetch(`${gateway.adminUrl}/readyz`)).body?.checks?.redis === 'up', 15_000, 20);
    const res = await timedFetch(`${gateway.adminUrl}/readyz`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ready', checks: { redis: 'up', 'triggers-file': 'up' } });
  });

  it('publishes each idempotency key once, answers the repeat as a replay, and counts the rate limit', async () => {
    const keys = Array.from({ length: 30 }, (_, i) => `order-${i}`);
    for (const key of keys) expect((await postWebhook(gateway.url, 'orders', { key }, key)).status).toBe(200);
    const replay = await postWebhook(gateway.url, 'orders', { key: 'order-0' }, 'order-0');
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(Number(replay.headers.get('x-ratelimit-remaining'))).toBe(1000 - 31);
    expect(sinkRecords(eventsDir).filter((r) => r.value.data.triggerPath === 'orders')).toHaveLength(30);
  });

  it("keeps the registry's keys in one slot and spreads the per-request keys over the masters", async () => {
    const put = await admin(gateway.adminUrl, ADMIN, 'PUT', '/admin/triggers/refunds', { workflowId: 'wf-r', workspaceId: 'ws-1', deployed: true });
    expect(put.status).toBe(200);
    const byNode = await cluster.keysByNode(prefix);
    const registryKeys = byNode.map((keys) => keys.filter((key) => key.startsWith(`${prefix}{registry}:`)));
    // All on one master: the triggers hash, its id set, the version counter, the TRIGGERS_FILE hash.
    expect(registryKeys.filter((keys) => keys.length > 0)).toHaveLength(1);
    expect(registryKeys.flat().sort()).toEqual(
      ['triggers', 'triggers:ids', 'triggers-file:sha256', 'version'].map((name) => `${prefix}{registry}:${name}`).sort(),
    );
    const perRequest = byNode.map((keys) => keys.filter((key) => !key.includes('{registry}')));
    expect(perRequest.filter((keys) => keys.length > 0).length).toBeGreaterThanOrEqual(2);
  });

  it('a trigger created through the admin API is served at once (its write script runs on the slot of {registry})', async () => {
    const path = `late-${randomUUID().slice(0, 8)}`;
    expect((await postWebhook(gateway.url, path, {})).status).toBe(404);
    expect((await admin(gateway.adminUrl, ADMIN, 'PUT', `/admin/triggers/${path}`, { workflowId: 'wf-late', workspaceId: 'ws-1', deployed: true })).status).toBe(200);
    expect((await postWebhook(gateway.url, path, {})).status).toBe(200);
  });

  it('never logs the password', () => {
    expect(gateway.output()).toContain('redis connected');
    expect(gateway.output()).not.toContain(PASSWORD);
  });
});
