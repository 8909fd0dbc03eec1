/**
 * Issue 9, item 4: failed authentications are counted in the rate limits' store, so with
 * Redis every pod sees them: guesses spread over two gateways are throttled as one.
 */
import { join } from 'node:path';
import type Redis from 'ioredis';
import { postWebhook } from '../helpers/gateway-client';
import { REDIS_TEST_URL, deleteKeys, requireRedis, uniquePrefix } from '../helpers/redis';
import { startGateway, type RunningGateway } from '../helpers/server';
import { tempDir, writeJson } from '../helpers/tmp';

const TOKEN = 'shared-throttle-token-9c2e';

describe('failed authentications shared by two gateways on one Redis', () => {
  const tmp = tempDir('igw-af-');
  const prefix = uniquePrefix('auth-fail');
  let redis: Redis;
  let a: RunningGateway;
  let b: RunningGateway;

  beforeAll(async () => {
    redis = await requireRedis();
    const env = (name: string) => ({
      REDIS_URL: REDIS_TEST_URL,
      REDIS_PREFIX: prefix,
      EVENTS_DIR: join(tmp.dir, name),
      AUTH_FAILURE_LIMIT: '4/60',
      TRIGGERS_FILE: writeJson(tmp.dir, 'triggers.json', {
        triggers: { guarded: { workflowId: 'wf', workspaceId: 'ws', deployed: true, auth: { token: TOKEN } } },
      }),
    });
    [a, b] = await Promise.all([startGateway(env('a')), startGateway(env('b'))]);
  });

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    if (redis) {
      await deleteKeys(redis, prefix);
      await redis.quit();
    }
    tmp.cleanup();
  });

  it('two wrong tokens on each gateway, then both answer 429 auth_throttled, even to the right token', async () => {
    const wrong = (g: RunningGateway, n: number) => postWebhook(g.url, 'guarded', { n }, undefined, { authorization: `Bearer wrong-${n}` });
    const statuses = [(await wrong(a, 1)).status, (await wrong(b, 2)).status, (await wrong(a, 3)).status, (await wrong(b, 4)).status];
    expect(statuses).toEqual([401, 401, 401, 401]);
    for (const g of [a, b]) {
      const right = await postWebhook(g.url, 'guarded', { ok: true }, undefined, { authorization: `Bearer ${TOKEN}` });
      expect(right.status).toBe(429);
      expect(right.body.error.details.reason).toBe('auth_throttled');
      expect(Number(right.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    expect(await redis.keys(`${prefix}af:60:*`)).toHaveLength(1);
  });
});
