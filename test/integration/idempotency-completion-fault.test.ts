/**
 * Issue 10 item 5: a Redis that fails exactly when the acknowledgement is recorded. The
 * built gateway talks to the real test Redis through RedisFaultProxy, which refuses the
 * completion command (any command carrying a completed record) and nothing else.
 *
 * The 2xx already went out or is about to: the event is in the sink. A failed completion
 * must therefore never open the key (a retry of that request would be published again):
 * it is retried, and until it is written the key stays closed by the request's claim.
 */
import { join } from 'node:path';
import type Redis from 'ioredis';
import { postWebhook, sinkRecords } from '../helpers/gateway-client';
import { REDIS_TEST_URL, deleteKeys, requireRedis, uniquePrefix } from '../helpers/redis';
import { RedisFaultProxy } from '../helpers/redis-fault-proxy';
import { startGateway, type RunningGateway } from '../helpers/server';
import { tempDir, writeJson } from '../helpers/tmp';

const isCompletion = (args: string[]) => args.some((arg) => arg.startsWith('{"state":"completed"'));

describe('a Redis that fails exactly at completion', () => {
  const tmp = tempDir('igw-completion-');
  const prefix = uniquePrefix('completion');
  const eventsDir = join(tmp.dir, 'events');
  let redis: Redis;
  let proxy: RedisFaultProxy;
  let gateway: RunningGateway;

  beforeAll(async () => {
    redis = await requireRedis();
    const target = new URL(REDIS_TEST_URL);
    proxy = await RedisFaultProxy.start({ host: target.hostname, port: Number(target.port || 6379) });
    gateway = await startGateway({
      REDIS_URL: proxy.url(Number(target.pathname.slice(1) || 0)),
      REDIS_PREFIX: prefix,
      EVENTS_DIR: eventsDir,
      TRIGGERS_FILE: writeJson(tmp.dir, 'triggers.json', {
        triggers: { orders: { workflowId: 'wf-1', workspaceId: 'ws-1', deployed: true } },
      }),
      // The proxy runs in this test process: on a busy machine it may stall well past the
      // default 300 ms, and a socket timeout would tear the gateway's connection down (a 503,
      // or with `accept` a retry published unguarded). The completion fault is what is tested.
      REDIS_TIMEOUT_MS: '5000',
      // A store failure answers 503 here, never a silent publish without dedupe.
      IDEMPOTENCY_ON_STORE_ERROR: 'refuse',
    });
  });

  afterAll(async () => {
    await gateway?.stop('SIGKILL');
    await proxy?.close();
    if (redis) {
      await deleteKeys(redis, prefix);
      redis.disconnect();
    }
    tmp.cleanup();
  });

  const published = (key: string) => sinkRecords(eventsDir).filter((r) => r.value.data.idempotencyKey === key);

  it('refused once: the completion is retried, and a retry of the acknowledged request is replayed, not published again', async () => {
    proxy.refuseNext(isCompletion, 1);
    const first = await postWebhook(gateway.url, 'orders', { order: 1 }, 'delivery-once');
    expect(first.status).toBe(200);
    expect(proxy.refused).toBe(1);

    const retry = await postWebhook(gateway.url, 'orders', { order: 1 }, 'delivery-once');
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.headers.get('x-event-id')).toBe(first.headers.get('x-event-id'));
    expect(published('delivery-once')).toHaveLength(1);
    // Logs reach this process through a pipe, possibly after the response.
    await gateway.waitForOutput('idempotency complete failed; retrying');
  });

  it('refused every time: the 2xx stands, the key stays closed (never released), nothing is published twice', async () => {
    const before = proxy.refused;
    proxy.refuseNext(isCompletion, Number.MAX_SAFE_INTEGER);
    try {
      const first = await postWebhook(gateway.url, 'orders', { order: 2 }, 'delivery-never');
      expect(first.status).toBe(200);
      expect(proxy.refused - before).toBeGreaterThanOrEqual(2);
      await gateway.waitForOutput('idempotency completion not recorded');

      const retry = await postWebhook(gateway.url, 'orders', { order: 2 }, 'delivery-never');
      expect(retry.status).toBe(409);
      expect(retry.body.error.details).toEqual({ reason: 'in_flight' });
      expect(published('delivery-never')).toHaveLength(1);
    } finally {
      proxy.stopRefusing();
    }
  });
});
