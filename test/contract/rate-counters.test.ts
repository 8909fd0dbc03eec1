/**
 * The Redis counters of the rate limits and failed authentications (one script per request),
 * on one Redis and on a three-master Redis Cluster: what they count, that they share keys
 * and values with rate-limit-redis (pods of either version count together), the limiter's
 * headers and refusals over them, and failing open when Redis is unreachable.
 */
import type { Response } from 'express';
import type { Options } from 'express-rate-limit';
import { answerCharge } from '../../src/http/rate-limit-headers';
import { Refusal } from '../../src/outcomes/refusal';
import { createRateLimiter, type Admission, type Bucket } from '../../src/ratelimit/limiter';
import { RedisCounters } from '../../src/ratelimit/redis-counters';
import { createRedisRateLimitStore } from '../helpers/rate-limit-redis-store';
import { RedisConnection } from '../../src/redis/connection';
import { silentLogger, uniquePrefix } from '../helpers/redis';
import { redisSetupRows, watchBatchedScript, type RedisSetup } from '../helpers/redis-setups';

const rows = redisSetupRows();

/** Just what the limiter touches of a response: its headers. */
function fakeResponse(): Response & { headers: Map<string, string> } {
  const headers = new Map<string, string>();
  return {
    headers,
    setHeader: (name: string, value: string) => headers.set(name.toLowerCase(), value),
    removeHeader: (name: string) => headers.delete(name.toLowerCase()),
  } as unknown as Response & { headers: Map<string, string> };
}

/** As the ingress gate answers an admission: the charge on the response (its headers, its 429), or when a blocked client may try again. */
async function admitOn(res: Response, admission: Promise<Admission>): Promise<Date | undefined> {
  const { blockedUntil, ...charge } = await admission;
  if (!blockedUntil) answerCharge(res, charge);
  return blockedUntil;
}


describe.each(rows)('Redis rate counters: %s', (_name, setup: RedisSetup) => {
  let prefix: string;
  let connection: RedisConnection;
  let counters: RedisCounters;
  let storeErrors: unknown[];

  const limiter = () =>
    createRateLimiter({
      onStoreError: (error) => storeErrors.push(error),
      counters,
    });

  beforeEach(async () => {
    prefix = uniquePrefix('rc');
    connection = await setup.connect();
    counters = new RedisCounters(connection.client, prefix, connection.isCluster);
    storeErrors = [];
  });

  afterEach(async () => {
    await connection.close();
    await setup.deleteKeys(prefix);
  });

  it('counts hits and reads counters in one call, each key apart, absent ones read as undefined', async () => {
    const ops = [
      { key: 'af:60:a', windowMs: 60_000, hit: false },
      { key: 'rl:trigger:60:x', windowMs: 60_000, hit: true },
      { key: 'rl:workspace:60:w', windowMs: 60_000, hit: true },
    ];
    const before = Date.now();
    const first = await counters.count(ops);
    expect(first[0]).toEqual({ status: 'fulfilled', value: undefined });
    const hit = first[1].status === 'fulfilled' ? first[1].value : undefined;
    expect(hit?.totalHits).toBe(1);
    expect(hit!.resetTime.getTime()).toBeGreaterThanOrEqual(before + 60_000);
    expect(hit!.resetTime.getTime()).toBeLessThanOrEqual(Date.now() + 60_000);
    const second = await counters.count(ops);
    expect(second.map((r) => (r.status === 'fulfilled' ? r.value?.totalHits : 'failed'))).toEqual([undefined, 2, 2]);
    await counters.count([{ key: 'af:60:a', windowMs: 60_000, hit: true }]);
    const read = await counters.count([{ key: 'af:60:a', windowMs: 60_000, hit: false }]);
    expect(read[0].status === 'fulfilled' && read[0].value?.totalHits).toBe(1);
  });

  it('counts the requests of one turn in one script call (one per counter on a cluster), a counter shared by two counted twice', async () => {
    const script = watchBatchedScript(connection.client, connection.isCluster, 'igwRateCount', 'igwRateCountOne');
    const request = (path: string) => [
      { key: `rl:trigger:60:${path}`, windowMs: 60_000, hit: true },
      { key: 'rl:workspace:60:shared', windowMs: 60_000, hit: true },
    ];
    const [a, b] = await Promise.all([counters.count(request('a')), counters.count(request('b'))]);
    const hits = (results: typeof a) => results.map((r) => (r.status === 'fulfilled' ? r.value?.totalHits : 'failed'));
    expect([hits(a), hits(b)]).toEqual([
      [1, 1],
      [1, 2],
    ]);
    script.expectOneCall();
  });

  it('shares keys and values with rate-limit-redis: either counts on from the other', async () => {
    const store = createRedisRateLimitStore(connection.client, `${prefix}rl:trigger:60:`);
    await store.init?.({ windowMs: 60_000 } as Options);
    await store.increment('orders');
    const [counted] = await counters.count([{ key: 'rl:trigger:60:orders', windowMs: 60_000, hit: true }]);
    expect(counted.status === 'fulfilled' && counted.value?.totalHits).toBe(2);
    expect((await store.increment('orders')).totalHits).toBe(3);
    expect((await store.get?.('orders'))?.totalHits).toBe(3);
  });

  it('starts a new window once the old one is over', async () => {
    const op = { key: 'rl:trigger:60:a', windowMs: 60_000, hit: true };
    await counters.count([op]);
    await counters.count([op]);
    await setup.elapse(prefix, 50_000);
    const [third] = await counters.count([op]);
    expect(third.status === 'fulfilled' && third.value?.totalHits).toBe(3);
    await setup.elapse(prefix, 10_000);
    const countedAt = Date.now();
    const [fresh] = await counters.count([op]);
    expect(fresh.status === 'fulfilled' && fresh.value?.totalHits).toBe(1);
    // A whole new window: at most the time since the count (however busy the machine) gone from it.
    const ttl = (await setup.keyTtls(prefix)).get(`${prefix}rl:trigger:60:a`)!;
    expect(ttl).toBeGreaterThan(60_000 - (Date.now() - countedAt) - 5);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('limits: the tightest bucket in the headers, 429 with the spent bucket once one is over', async () => {
    const enforce = limiter();
    const buckets: Bucket[] = [
      { kind: 'trigger', id: 'orders', limit: 3, windowSeconds: 60 },
      { kind: 'workspace', id: 'ws', limit: 10, windowSeconds: 60 },
    ];
    for (let i = 1; i <= 3; i += 1) {
      const res = fakeResponse();
      answerCharge(res, await enforce(buckets));
      expect(res.headers.get('x-ratelimit-limit')).toBe('3');
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(3 - i));
      expect(Date.parse(res.headers.get('x-ratelimit-reset')!)).toBeGreaterThan(Date.now() + 55_000);
    }
    const res = fakeResponse();
    const refused = await enforce(buckets)
      .then((charge) => answerCharge(res, charge))
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(Refusal);
    expect((refused as Refusal).reason).toBe('rate_limited');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(res.headers.get('x-ratelimit-limit')).toBe('3');
    // The refused request counted too, in both buckets.
    const other = fakeResponse();
    answerCharge(other, await enforce([{ kind: 'workspace', id: 'ws', limit: 10, windowSeconds: 60 }]));
    expect(other.headers.get('x-ratelimit-remaining')).toBe('5');
    expect(storeErrors).toEqual([]);
  });

  it('a charge is a plain value, no HTTP: what the headers say of the tightest bucket, and the 429 once one is spent', async () => {
    const enforce = limiter();
    const buckets: Bucket[] = [
      { kind: 'trigger', id: 'plain', limit: 1, windowSeconds: 60 },
      { kind: 'workspace', id: 'plain-ws', limit: 5, windowSeconds: 60 },
    ];
    const first = await enforce(buckets);
    expect(first).toEqual({ shown: { limit: 1, remaining: 0, resetTime: expect.any(Date) } });
    const second = await enforce(buckets);
    expect(second.shown).toMatchObject({ limit: 1, remaining: 0 });
    expect(second.refusal).toBeInstanceOf(Refusal);
    expect(second.refusal!.reason).toBe('rate_limited');
    expect(second.refusal!.retryAt).toEqual(second.shown!.resetTime);
  });

  it('auth throttle: admitAndCharge refuses a client over its failures, without bucket headers', async () => {
    const enforce = limiter();
    const failure = { key: 'trigger:orders|10.0.0.1', rule: { limit: 2, windowSeconds: 60 } };
    const buckets: Bucket[] = [{ kind: 'trigger', id: 'orders', limit: 100, windowSeconds: 60 }];
    const res = fakeResponse();
    expect(await admitOn(res, enforce.admitAndCharge(failure, buckets))).toBeUndefined();
    expect(res.headers.get('x-ratelimit-remaining')).toBe('99');
    await enforce.authFailures.recordFailure(failure.key, failure.rule);
    expect(await enforce.authFailures.blockedUntil(failure.key, failure.rule)).toBeUndefined();
    await enforce.authFailures.recordFailure(failure.key, failure.rule);
    const blocked = fakeResponse();
    const until = await admitOn(blocked, enforce.admitAndCharge(failure, buckets));
    expect(until!.getTime()).toBeGreaterThan(Date.now() + 55_000);
    expect(blocked.headers.size).toBe(0);
    const again = await enforce.authFailures.blockedUntil(failure.key, failure.rule);
    expect(Math.abs(again!.getTime() - until!.getTime())).toBeLessThan(100);
    // Another address on the same target is not blocked.
    expect(await enforce.authFailures.blockedUntil('trigger:orders|10.0.0.2', failure.rule)).toBeUndefined();
    await setup.elapse(prefix, 60_000);
    expect(await admitOn(fakeResponse(), enforce.admitAndCharge(failure, buckets))).toBeUndefined();
  });

  it('fails open when Redis is unreachable: every counter counted as a store error, no headers, no refusal', async () => {
    const down = new RedisConnection(
      setup.name === 'redis' ? { target: 'redis://127.0.0.1:1', timeoutMs: 200 } : { target: { nodes: [{ host: '127.0.0.1', port: 1 }], tls: false }, timeoutMs: 200 },
      silentLogger(),
    );
    await down.start();
    try {
      counters = new RedisCounters(down.client, prefix, down.isCluster);
      const enforce = limiter();
      const buckets: Bucket[] = [
        { kind: 'trigger', id: 'orders', limit: 1, windowSeconds: 60 },
        { kind: 'workspace', id: 'ws', limit: 1, windowSeconds: 60 },
      ];
      const failure = { key: 'trigger:orders|10.0.0.1', rule: { limit: 1, windowSeconds: 60 } };
      for (let i = 0; i < 2; i += 1) {
        const res = fakeResponse();
        expect(await admitOn(res, enforce.admitAndCharge(failure, buckets))).toBeUndefined();
        answerCharge(res, await enforce(buckets));
        expect(res.headers.size).toBe(0);
      }
      await enforce.authFailures.recordFailure(failure.key, failure.rule);
      expect(await enforce.authFailures.blockedUntil(failure.key, failure.rule)).toBeUndefined();
      // Twice (3 counters + 2 buckets), one failure recorded, one read.
      expect(storeErrors).toHaveLength(2 * 5 + 2);
    } finally {
      await down.close();
    }
  });
});
