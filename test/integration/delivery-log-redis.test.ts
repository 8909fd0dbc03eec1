/**
 * Contract §13 with the built gateway on the real Redis:
 * - two gateway processes share one delivery log: a refusal on A is read through B;
 * - the log failing (Redis refuses its append script, through RedisFaultProxy, and nothing else)
 *   fails no request: it is served, and igw_delivery_log_lost_total counts the lost entries.
 */
import { join } from 'node:path';
import type Redis from 'ioredis';
import { admin, metricValue, postWebhook, sinkRecords } from '../helpers/gateway-client';
import { REDIS_TEST_URL, deleteKeys, requireRedis, uniquePrefix } from '../helpers/redis';
import { RedisFaultProxy } from '../helpers/redis-fault-proxy';
import { startGateway, type RunningGateway } from '../helpers/server';
import { tempDir, writeJson } from '../helpers/tmp';
import { waitUntil } from '../helpers/wait';

const ADMIN = 'delivery-log-admin-token-5e2c';
const TOKEN = 'delivery-log-trigger-token-81f0';

describe('the delivery log on Redis, seen from two gateway processes', () => {
  const tmp = tempDir('igw-deliveries-');
  const prefix = uniquePrefix('deliveries-gw');
  let redis: Redis;
  let proxy: RedisFaultProxy;
  let a: RunningGateway;
  let b: RunningGateway;

  beforeAll(async () => {
    redis = await requireRedis();
    const target = new URL(REDIS_TEST_URL);
    proxy = await RedisFaultProxy.start({ host: target.hostname, port: Number(target.port || 6379) });
    const triggersFile = writeJson(tmp.dir, 'triggers.json', {
      triggers: { guarded: { workflowId: 'wf-1', workspaceId: 'ws-1', deployed: true, auth: { token: TOKEN } } },
    });
    const env = (name: string, url: string) => ({
      REDIS_URL: url,
      REDIS_PREFIX: prefix,
      EVENTS_DIR: join(tmp.dir, name),
      TRIGGERS_FILE: triggersFile,
      ADMIN_TOKEN: ADMIN,
      // The proxy runs in this test process: on a busy machine it may stall past the default
      // 300 ms, and a socket timeout would tear A's connection down (lost entries, 503s) in a
      // test that counts exactly the entries it refuses.
      REDIS_TIMEOUT_MS: '5000',
    });
    // A reaches Redis through the proxy (so its log writes can be refused), B directly.
    [a, b] = await Promise.all([startGateway(env('a', proxy.url(Number(target.pathname.slice(1) || 0)))), startGateway(env('b', REDIS_TEST_URL))]);
  });

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await proxy?.close();
    if (redis) {
      await deleteKeys(redis, prefix);
      redis.disconnect();
    }
    tmp.cleanup();
  });

  const logThrough = async (gateway: RunningGateway) => (await admin(gateway.adminUrl, ADMIN, 'GET', '/admin/triggers/guarded/deliveries')).body;

  it('a refusal on A is in the log read through B, and an acceptance on B through A', async () => {
    const refused = await postWebhook(a.url, 'guarded', { n: 1 }, undefined, { authorization: 'Bearer not-the-token-at-all' });
    expect(refused.status).toBe(401);
    const refusedId = refused.headers.get('x-request-id');
    await waitUntil(async () => (await logThrough(b)).data.some((e: { requestId: string }) => e.requestId === refusedId), 'the refusal in B\'s log');
    expect((await logThrough(b)).data.find((e: { requestId: string }) => e.requestId === refusedId)).toMatchObject({
      status: 401,
      outcome: 'unauthorized',
      reason: 'credentials_invalid',
    });

    const accepted = await postWebhook(b.url, 'guarded', { n: 2 }, 'key-2', { authorization: `Bearer ${TOKEN}` });
    expect(accepted.status).toBe(200);
    await waitUntil(async () => (await logThrough(a)).data[0]?.requestId === accepted.headers.get('x-request-id'), 'the acceptance in A\'s log');
    const log = await logThrough(a);
    expect(log.data[0]).toMatchObject({ status: 200, outcome: 'accepted', idempotencyKey: 'key-2', eventId: accepted.headers.get('x-event-id') });
    expect(JSON.stringify(log)).not.toContain(TOKEN);
  });

  it('a log that cannot be written fails no request: it is served, and the lost entry is counted', async () => {
    const lostBefore = await metricValue(a.adminUrl, 'igw_delivery_log_lost_total');
    // The log's one command per request: its append script (EVAL or EVALSHA) on a deliveries key.
    proxy.refuseNext((args) => /^EVAL(SHA)?$/i.test(args[0]) && String(args[3]).includes('deliveries:'), 3);
    const responses = [];
    for (let i = 0; i < 3; i++) responses.push(await postWebhook(a.url, 'guarded', { n: 10 + i }, `lost-${i}`, { authorization: `Bearer ${TOKEN}` }));
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200]);
    const keys = sinkRecords(join(tmp.dir, 'a')).map((r) => r.value.data.idempotencyKey);
    expect(keys).toEqual(expect.arrayContaining(['lost-0', 'lost-1', 'lost-2']));
    await waitUntil(async () => (await metricValue(a.adminUrl, 'igw_delivery_log_lost_total')) === lostBefore + 3, 'three lost entries counted');
    expect(proxy.refused).toBe(3);
    const ids = new Set(responses.map((r) => r.headers.get('x-request-id')));
    expect((await logThrough(b)).data.filter((e: { requestId: string }) => ids.has(e.requestId))).toEqual([]);
  });
});
