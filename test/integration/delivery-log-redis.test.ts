/**
 * Contract §13 with the built gateway on the real Redis:
 * - two gateway processes share one delivery log: a refusal on A is read through B;
 * - the log failing (Redis refuses its append script, through RedisFaultProxy, and nothing else)
 *   fails no request: it is served, and igw_delivery_log_lost_total counts the lost entries;
 * - §13.1: entries are at most 4 KiB whatever the sender sends, so the log stays readable; a
 *   trigger or channel registered again starts with an empty log; strangers' refusals cannot
 *   push out accepted deliveries; a cursor never given out is a 400.
 */
import { join } from 'node:path';
import type Redis from 'ioredis';
import { admin, metricValue, postWebhook, sinkRecords, timedFetch } from '../helpers/gateway-client';
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
      // The test's requests come from 127.0.0.1: one proxy hop, so X-Forwarded-For is read.
      TRUST_PROXY: '1',
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
  const readLog = (gateway: RunningGateway, what: string, query = '?limit=500') => admin(gateway.adminUrl, ADMIN, 'GET', `/admin/${what}/deliveries${query}`);
  /** The log's entries, newest first, once the read answers 200 (it must, every time). */
  const entries = async (gateway: RunningGateway, what: string) => {
    const res = await readLog(gateway, what);
    expect(res.status).toBe(200);
    return res.body.data as Array<Record<string, any>>;
  };
  const requestIds = async (gateway: RunningGateway, what: string) => (await entries(gateway, what)).map((e) => e.requestId as string);

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

  it('keeps entries under 4 KiB (a hostile map schema, a huge forwarded address), and the log readable after 100 such refusals', async () => {
    const schema = { type: 'object', additionalProperties: { type: 'number' } };
    const put = await admin(a.adminUrl, ADMIN, 'PUT', '/admin/triggers/mapped', { workflowId: 'wf-m', workspaceId: 'ws-m', deployed: true, schema });
    expect(put.status).toBe(200);
    const hostile = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`${i}-`.padEnd(48_000, 'k'), 'a-body-value-never-logged']));
    const refused: string[] = [];
    for (let round = 0; round < 25; round++) {
      const batch = await Promise.all(
        Array.from({ length: 4 }, () => postWebhook(b.url, 'mapped', hostile, undefined, { 'x-forwarded-for': 'f'.repeat(12_000) })),
      );
      for (const res of batch) {
        expect([res.status, res.body.error.details.reason]).toEqual([400, 'schema_invalid']);
        refused.push(res.headers.get('x-request-id')!);
      }
    }
    await waitUntil(async () => (await requestIds(a, 'triggers/mapped')).length === 100, 'the 100 refusals in A\'s log');
    const log = await entries(a, 'triggers/mapped');
    expect(new Set(log.map((e) => e.requestId))).toEqual(new Set(refused));
    for (const entry of log) {
      expect(Buffer.byteLength(JSON.stringify(entry))).toBeLessThanOrEqual(4096);
      expect(entry.clientIp).toBe('f'.repeat(256));
      expect(entry.diagnostics.errors.length).toBeGreaterThan(0);
      for (const error of entry.diagnostics.errors) expect(error.instancePath.length).toBeLessThanOrEqual(256);
    }
    expect(JSON.stringify(log)).not.toContain('a-body-value-never-logged');
    // Read again and again, through both pods: never a 503.
    for (const gateway of [a, b, a, b]) expect((await readLog(gateway, 'triggers/mapped')).status).toBe(200);
    // 100 megabyte-sized refusals through an in-process proxy: minutes on a CI machine beside stress-ng, not seconds.
  }, 300_000);

  it('a trigger or channel deleted and registered again (another workspace) starts with an empty log, on both pods', async () => {
    const trigger = (workspaceId: string) => ({ workflowId: 'wf-r', workspaceId, deployed: true });
    expect((await admin(a.adminUrl, ADMIN, 'PUT', '/admin/triggers/reused', trigger('ws-old'))).status).toBe(200);
    const old = await postWebhook(a.url, 'reused', { n: 1 });
    expect(old.status).toBe(200);
    await waitUntil(async () => (await requestIds(b, 'triggers/reused')).includes(old.headers.get('x-request-id')!), 'the old entry in B\'s log');
    // An update is the same registration: the log stays.
    expect((await admin(b.adminUrl, ADMIN, 'PUT', '/admin/triggers/reused', { ...trigger('ws-old'), workflowId: 'wf-r2' })).status).toBe(200);
    expect(await requestIds(b, 'triggers/reused')).toEqual([old.headers.get('x-request-id')]);

    expect((await admin(a.adminUrl, ADMIN, 'DELETE', '/admin/triggers/reused')).status).toBe(200);
    expect((await admin(a.adminUrl, ADMIN, 'PUT', '/admin/triggers/reused', trigger('ws-new'))).status).toBe(200);
    expect(await requestIds(a, 'triggers/reused')).toEqual([]);
    await waitUntil(async () => (await requestIds(b, 'triggers/reused')).length === 0, 'B reads the new registration\'s log');

    const channel = (workspaceId: string) => ({ provider: 'telegram', workspaceId, inboxId: 'in-1', secretToken: 'reused-channel-secret-2' });
    expect((await admin(a.adminUrl, ADMIN, 'PUT', '/admin/channels/reused-tg', channel('ws-old'))).status).toBe(200);
    const wrong = await timedFetch(`${a.url}/api/channels/telegram/reused-tg`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': 'not-the-secret' },
      body: JSON.stringify({ update_id: 1 }),
    });
    expect(wrong.status).toBe(401);
    await waitUntil(async () => (await requestIds(b, 'channels/reused-tg')).length === 1, 'the channel entry in B\'s log');
    expect((await admin(b.adminUrl, ADMIN, 'DELETE', '/admin/channels/reused-tg')).status).toBe(200);
    expect((await admin(b.adminUrl, ADMIN, 'PUT', '/admin/channels/reused-tg', channel('ws-new'))).status).toBe(200);
    expect(await requestIds(b, 'channels/reused-tg')).toEqual([]);
    await waitUntil(async () => (await requestIds(a, 'channels/reused-tg')).length === 0, 'A reads the new channel\'s log');
  });

  it('160 unauthenticated refusals leave the accepted deliveries before them readable', async () => {
    const put = await admin(a.adminUrl, ADMIN, 'PUT', '/admin/triggers/flooded', { workflowId: 'wf-f', workspaceId: 'ws-f', deployed: true, auth: { token: TOKEN } });
    expect(put.status).toBe(200);
    const accepted: string[] = [];
    // All through B: Redis orders entries by arrival, and one pod's writes arrive in its order
    // (A's writes go through the fault proxy, so alternating pods could interleave them).
    for (let i = 0; i < 10; i++) {
      const res = await postWebhook(b.url, 'flooded', { i }, `flood-${i}`, { authorization: `Bearer ${TOKEN}` });
      expect(res.status).toBe(200);
      accepted.push(res.headers.get('x-request-id')!);
    }
    // Through B, which talks to Redis directly (A's fault proxy is not built for floods), 20 at a time.
    const flood: Awaited<ReturnType<typeof postWebhook>>[] = [];
    for (let round = 0; round < 8; round++) {
      flood.push(
        ...(await Promise.all(Array.from({ length: 20 }, () => postWebhook(b.url, 'flooded', {}, undefined, { authorization: 'Bearer not-the-token-at-all' })))),
      );
    }
    expect(flood.filter((res) => res.status !== 401 && res.status !== 429).map((res) => [res.status, res.body])).toEqual([]);
    const floodIds = new Set(flood.map((res) => res.headers.get('x-request-id')!));
    await waitUntil(async () => (await requestIds(a, 'triggers/flooded')).length === 10 + 25, 'both shares full');
    const log = await requestIds(a, 'triggers/flooded');
    expect(log.filter((id) => !floodIds.has(id))).toEqual([...accepted].reverse());
    expect(log.filter((id) => floodIds.has(id))).toHaveLength(25);
  });

  it('answers 400 for a cursor it never gave out (0-0, past 64 bits, malformed), and pages with the ones it gives', async () => {
    for (let i = 0; i < 3; i++) expect((await postWebhook(b.url, 'guarded', { i }, `paged-${i}`, { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    await waitUntil(async () => (await requestIds(b, 'triggers/guarded')).length === 5, 'five entries');
    for (const cursor of ['0-0', '99999999999999999999-0', '0-99999999999999999999', '9999999999999-0', '12', 'not a cursor']) {
      const res = await readLog(b, 'triggers/guarded', `?cursor=${Buffer.from(cursor).toString('base64url')}`);
      expect([cursor, res.status, res.body.error?.code]).toEqual([cursor, 400, 'BAD_REQUEST']);
    }
    const all = await requestIds(b, 'triggers/guarded');
    const first = await readLog(b, 'triggers/guarded', '?limit=2');
    const rest = await readLog(a, 'triggers/guarded', `?limit=500&cursor=${first.body.nextCursor}`);
    expect(rest.status).toBe(200);
    expect([...first.body.data, ...rest.body.data].map((e: { requestId: string }) => e.requestId)).toEqual(all);
  });
});
