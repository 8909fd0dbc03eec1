/**
 * Two built gateway processes (A and B) on the same real Redis, each with its own file sink:
 * they must behave as one gateway. Once on one Redis (127.0.0.1:6379, a unique REDIS_PREFIX)
 * and once on a three-master Redis Cluster this file starts (REDIS_CLUSTER_NODES).
 * - a trigger's rate limit admits exactly N requests across both;
 * - one idempotency key sent to both at the same moment is published once;
 * - a change made through A's admin API is in force on B within 1 s (contract §8).
 */
import { join } from 'node:path';
import { admin, postWebhook, sinkRecords, timedFetch, type TimedResponse } from '../helpers/gateway-client';
import { uniquePrefix, waitFor } from '../helpers/redis';
import { redisSetupRows } from '../helpers/redis-setups';
import { startGateway, type RunningGateway } from '../helpers/server';
import { tempDir, writeJson } from '../helpers/tmp';

const ADMIN = 'two-gateways-admin-token-7f3a';
const LIMIT = 20;
const WINDOW_SECONDS = 60;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

const trigger = (workflowId: string, extra: Record<string, unknown> = {}) => ({
  workflowId,
  workspaceId: 'ws-two',
  deployed: true,
  ...extra,
});

describe.each(redisSetupRows())('two gateway processes on one %s', (_name, setup) => {
  const tmp = tempDir('igw-two-');
  const prefix = uniquePrefix('two-gw');
  const eventsA = join(tmp.dir, 'events-a');
  const eventsB = join(tmp.dir, 'events-b');
  let a: RunningGateway;
  let b: RunningGateway;

  /** Every record of both sinks. */
  const allRecords = () => [...sinkRecords(eventsA), ...sinkRecords(eventsB)];

  beforeAll(async () => {
    const redisEnv = await setup.gatewayEnv();
    const triggersFile = writeJson(tmp.dir, 'triggers.json', {
      triggers: {
        limited: trigger('wf-limited', { rateLimit: { limit: LIMIT, windowSeconds: WINDOW_SECONDS } }),
        race: trigger('wf-race'),
        'to-undeploy': trigger('wf-undeploy'),
      },
    });
    const env = (eventsDir: string) => ({
      ...redisEnv,
      REDIS_PREFIX: prefix,
      EVENTS_DIR: eventsDir,
      TRIGGERS_FILE: triggersFile,
      ADMIN_TOKEN: ADMIN,
    });
    [a, b] = await Promise.all([startGateway(env(eventsA)), startGateway(env(eventsB))]);
    // One connection each way before the races, so both requests of a pair leave together.
    await Promise.all([fetch(`${a.url}/healthz`), fetch(`${b.url}/healthz`)]);
  });

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await setup.deleteKeys(prefix);
    tmp.cleanup();
  });

  it('/readyz on both is 200 and reports redis and the sink up', async () => {
    for (const gateway of [a, b]) {
      const res = await timedFetch(`${gateway.adminUrl}/readyz`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'ready', checks: { redis: 'up', sink: 'up' } });
    }
  });

  it(`a rate limit of ${LIMIT} per ${WINDOW_SECONDS} s admits exactly ${LIMIT} of ${2 * LIMIT} concurrent requests across both`, async () => {
    const sentAt = Date.now();
    const responses = await Promise.all(
      Array.from({ length: 2 * LIMIT }, (_, i) =>
        postWebhook(i % 2 === 0 ? a.url : b.url, 'limited', { n: i }, `rl-${i}`).then((res) => ({ ...res, via: i % 2 === 0 ? 'A' : 'B' })),
      ),
    );
    const admitted = responses.filter((r) => r.status === 200);
    const limited = responses.filter((r) => r.status === 429);
    console.log(
      `rate limit across A and B: admitted A=${admitted.filter((r) => r.via === 'A').length} B=${admitted.filter((r) => r.via === 'B').length}, 429: ${limited.length}`,
    );
    expect(admitted).toHaveLength(LIMIT);
    expect(limited).toHaveLength(LIMIT);

    // The counter is shared: each admitted request saw a different count, so the remaining
    // values of the admitted ones are exactly LIMIT-1 … 0.
    const remaining = admitted.map((r) => Number(r.headers.get('x-ratelimit-remaining'))).sort((x, y) => x - y);
    expect(remaining).toEqual(Array.from({ length: LIMIT }, (_, i) => i));
    const resets: number[] = [];
    for (const res of responses) {
      expect(res.headers.get('x-ratelimit-limit')).toBe(String(LIMIT));
      const reset = res.headers.get('x-ratelimit-reset');
      expect(reset).toMatch(ISO);
      resets.push(Date.parse(reset!));
    }
    // One window for both processes: one refill time (give or take the time the burst took).
    expect(Math.max(...resets) - Math.min(...resets)).toBeLessThan(2000);
    expect(Math.min(...resets)).toBeGreaterThan(sentAt);
    expect(Math.max(...resets)).toBeLessThanOrEqual(Date.now() + WINDOW_SECONDS * 1000);

    for (const res of limited) {
      expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
      expect(res.body.error.code).toBe('RATE_LIMITED');
      const retryAfter = Number(res.headers.get('retry-after'));
      expect(Number.isInteger(retryAfter)).toBe(true);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(WINDOW_SECONDS);
      expect(res.body.error.details.retryAfter).toMatch(ISO);
      expect(Math.abs(Date.parse(res.body.error.details.retryAfter) - Date.parse(res.headers.get('x-ratelimit-reset')!))).toBeLessThan(1000);
    }

    // Only what was admitted reached a sink, and the window stays closed on both.
    expect(allRecords().filter((r) => r.value.data.triggerPath === 'limited')).toHaveLength(LIMIT);
    for (const gateway of [a, b]) {
      const after = await postWebhook(gateway.url, 'limited', { n: 'after' }, `rl-after-${gateway.port}`);
      expect(after.status).toBe(429);
    }
  });

  it('the same idempotency key sent to A and B at the same moment is published once (20 races)', async () => {
    const RACES = 20;
    const outcomes = { replayed: 0, inFlight: 0 };
    for (let i = 0; i < RACES; i += 1) {
      const key = `race-${i}`;
      const body = { order: i };
      const [fromA, fromB] = await Promise.all([postWebhook(a.url, 'race', body, key), postWebhook(b.url, 'race', body, key)]);
      const pair = [fromA, fromB];
      const original = pair.filter((r) => r.status === 200 && r.headers.get('idempotent-replayed') === null);
      expect(original).toHaveLength(1);
      const other = pair.find((r) => r !== original[0]) as TimedResponse;
      if (other.status === 200) {
        expect(other.headers.get('idempotent-replayed')).toBe('true');
        expect(other.headers.get('x-event-id')).toBe(original[0].headers.get('x-event-id'));
        expect(other.body).toEqual(original[0].body);
        outcomes.replayed += 1;
      } else {
        expect(other.status).toBe(409);
        expect(other.body.error.code).toBe('CONFLICT');
        expect(other.body.error.details).toEqual({ reason: 'in_flight' });
        expect(Number(other.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        outcomes.inFlight += 1;
      }
    }
    console.log(`same key to A and B at once, ${RACES} races: the other got a replay ${outcomes.replayed}×, 409 in flight ${outcomes.inFlight}×`);

    // Exactly one record per key across both sinks, never two.
    const records = allRecords().filter((r) => r.value.data.triggerPath === 'race');
    const perKey = new Map<string, number>();
    for (const record of records) perKey.set(record.value.data.idempotencyKey, (perKey.get(record.value.data.idempotencyKey) ?? 0) + 1);
    expect(records).toHaveLength(RACES);
    expect([...perKey.keys()].sort()).toEqual(Array.from({ length: RACES }, (_, i) => `race-${i}`).sort());
    expect([...perKey.values()].every((count) => count === 1)).toBe(true);

    // Once settled, the key is replayed by either process.
    for (const gateway of [a, b]) {
      const again = await postWebhook(gateway.url, 'race', { order: 0 }, 'race-0');
      expect(again.status).toBe(200);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
    }
    expect(allRecords().filter((r) => r.value.data.triggerPath === 'race')).toHaveLength(RACES);
  });

  it('an undeploy through A gives 404 on B within 1 s, although B served the trigger right before', async () => {
    // B's cache is warm: it served the trigger a moment ago.
    for (let i = 0; i < 3; i += 1) expect((await postWebhook(b.url, 'to-undeploy', { i }, `warm-${i}`)).status).toBe(200);

    const putSentAt = performance.now();
    const put = await admin(a.adminUrl, ADMIN, 'PUT', '/admin/triggers/to-undeploy', { ...trigger('wf-undeploy'), deployed: false });
    expect(put.status).toBe(200);
    expect(put.body.data).toMatchObject({ deployed: false });
    const acknowledgedAt = performance.now();

    let poll = 0;
    let last: TimedResponse | undefined;
    await waitFor(async () => {
      last = await postWebhook(b.url, 'to-undeploy', { poll }, `poll-${(poll += 1)}`);
      return last.status === 404;
    }, 3000, 5);
    const delay = performance.now() - acknowledgedAt;
    console.log(
      `undeploy through A → 404 on B after ${delay.toFixed(1)} ms from A's acknowledgement ` +
        `(${(performance.now() - putSentAt).toFixed(1)} ms from sending the PUT, ${poll} polls of B)`,
    );
    expect(last!.body.error.code).toBe('NOT_FOUND');
    expect(delay).toBeLessThan(1000);
    // …and it stays so on both.
    expect((await postWebhook(a.url, 'to-undeploy', {}, 'after-a')).status).toBe(404);
    expect((await postWebhook(b.url, 'to-undeploy', {}, 'after-b')).status).toBe(404);
  });

  it('a trigger created or deleted through A is in force on B within 1 s, although B cached its absence', async () => {
    // B has just looked the path up and found nothing (a cached "not found").
    expect((await postWebhook(b.url, 'created-later', {}, 'before')).status).toBe(404);

    const put = await admin(a.adminUrl, ADMIN, 'PUT', '/admin/triggers/created-later', trigger('wf-created'));
    expect(put.status).toBe(200);
    const createdAt = performance.now();
    let poll = 0;
    await waitFor(async () => (await postWebhook(b.url, 'created-later', {}, `created-${(poll += 1)}`)).status === 200, 3000, 5);
    const createDelay = performance.now() - createdAt;

    const del = await admin(a.adminUrl, ADMIN, 'DELETE', '/admin/triggers/created-later');
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ data: { path: 'created-later', deleted: true } });
    const deletedAt = performance.now();
    await waitFor(async () => (await postWebhook(b.url, 'created-later', {}, `deleted-${(poll += 1)}`)).status === 404, 3000, 5);
    const deleteDelay = performance.now() - deletedAt;

    console.log(`created through A → served by B after ${createDelay.toFixed(1)} ms; deleted → 404 on B after ${deleteDelay.toFixed(1)} ms`);
    expect(createDelay).toBeLessThan(1000);
    expect(deleteDelay).toBeLessThan(1000);
    const published = allRecords().filter((r) => r.value.data.triggerPath === 'created-later');
    expect(published.length).toBeGreaterThanOrEqual(1);
    expect(published.every((r) => r.key === 'wf-created')).toBe(true);
  });
});
