import request, { type Response } from 'supertest';
import { testApp } from '../helpers/app';
import { TestClock } from '../helpers/clock';
import { expectError, expectRateLimitHeaders, hookUrl, triggerInput, TRIGGER_TOKEN } from '../helpers/http';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** 429 as the contract describes it: Retry-After in whole seconds, details.retryAfter ISO 8601. */
function expect429(res: Response, limit: number): void {
  const error = expectError(res, 'RATE_LIMITED');
  expect(Object.keys(error.details).sort()).toEqual(['reason', 'retryAfter']);
  expect(error.details.reason).toBe('rate_limited');
  expect(error.details.retryAfter).toMatch(ISO);
  const retryAfter = res.headers['retry-after'];
  expect(retryAfter).toMatch(/^[1-9][0-9]*$/);
  const headers = expectRateLimitHeaders(res);
  expect(headers.limit).toBe(limit);
  expect(headers.remaining).toBe(0);
  // The ISO time in the body and the reset header name the same refill time, Retry-After rounds it up.
  expect(new Date(error.details.retryAfter).getTime()).toBe(headers.reset.getTime());
  const untilReset = (headers.reset.getTime() - Date.now()) / 1000;
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(Math.floor(untilReset));
  expect(Number(retryAfter)).toBeLessThanOrEqual(Math.ceil(untilReset) + 1);
}

describe('per-trigger rate limit (contract §6)', () => {
  const t = testApp({ RATE_LIMIT_DEFAULT: '2/60', RATE_LIMIT_WORKSPACE: '1000/60' });

  it('counts down X-RateLimit-Remaining and answers 429 past the trigger\'s own rateLimit', async () => {
    await t.addTrigger('own', triggerInput({ rateLimit: { limit: 3, windowSeconds: 60 } }));
    const remaining: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await request(t.app).post(hookUrl('own')).send({ i });
      expect(res.status).toBe(200);
      const headers = expectRateLimitHeaders(res);
      expect(headers.limit).toBe(3);
      expect(headers.reset.getTime()).toBeGreaterThan(Date.now());
      expect(headers.reset.getTime()).toBeLessThanOrEqual(Date.now() + 61_000);
      remaining.push(headers.remaining);
    }
    expect(remaining).toEqual([2, 1, 0]);
    const before = t.sink.records.length;
    const res = await request(t.app).post(hookUrl('own')).send({ i: 3 });
    expect429(res, 3);
    expect(t.sink.records).toHaveLength(before);
  });

  it('uses RATE_LIMIT_DEFAULT for a trigger without rateLimit', async () => {
    await t.addTrigger('default', triggerInput());
    expect((await request(t.app).post(hookUrl('default')).send({ i: 1 })).status).toBe(200);
    expect((await request(t.app).post(hookUrl('default')).send({ i: 2 })).status).toBe(200);
    expect429(await request(t.app).post(hookUrl('default')).send({ i: 3 }), 2);
  });

  it('buckets are per trigger: another trigger still has its own allowance', async () => {
    await t.addTrigger('neighbour', triggerInput());
    const res = await request(t.app).post(hookUrl('neighbour')).send({ i: 1 });
    expect(res.status).toBe(200);
    expect(expectRateLimitHeaders(res)).toMatchObject({ limit: 2, remaining: 1 });
  });

  it('refused requests before the rate-limit stage (401) do not use up the allowance', async () => {
    await t.addTrigger('authed', triggerInput({ auth: { token: TRIGGER_TOKEN }, rateLimit: { limit: 2, windowSeconds: 60 } }));
    for (let i = 0; i < 4; i++) {
      const res = await request(t.app).post(hookUrl('authed')).set('Authorization', 'Bearer wrong-token').send({ i });
      expectError(res, 'UNAUTHORIZED');
    }
    const ok = await request(t.app).post(hookUrl('authed')).set('Authorization', `Bearer ${TRIGGER_TOKEN}`).send({ i: 9 });
    expect(ok.status).toBe(200);
    expect(expectRateLimitHeaders(ok)).toMatchObject({ limit: 2, remaining: 1 });
  });

  it('a replayed duplicate counts against the bucket like any request', async () => {
    await t.addTrigger('dups', triggerInput({ rateLimit: { limit: 2, windowSeconds: 60 } }));
    const first = await request(t.app).post(hookUrl('dups')).set('Idempotency-Key', 'd').send({ a: 1 });
    const replay = await request(t.app).post(hookUrl('dups')).set('Idempotency-Key', 'd').send({ a: 1 });
    expect(first.status).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(expectRateLimitHeaders(replay).remaining).toBe(0);
    expect429(await request(t.app).post(hookUrl('dups')).set('Idempotency-Key', 'd').send({ a: 1 }), 2);
  });

});

describe('a rate-limit window that passes (contract §6)', () => {
  // Windows end when the test moves the clock, never between two requests of a slow run.
  const clock = new TestClock();
  const t = testApp({ RATE_LIMIT_WORKSPACE: '1000/60' }, { clock });

  beforeAll(() => clock.install());
  afterAll(() => clock.uninstall());

  it('the allowance comes back when the window passes', async () => {
    await t.addTrigger('short', triggerInput({ rateLimit: { limit: 1, windowSeconds: 60 } }));
    expect((await request(t.app).post(hookUrl('short')).send({ i: 1 })).status).toBe(200);
    const limited = await request(t.app).post(hookUrl('short')).send({ i: 2 });
    expect429(limited, 1);
    expect(limited.headers['retry-after']).toBe('60');
    clock.advance(59_000);
    const stillLimited = await request(t.app).post(hookUrl('short')).send({ i: 3 });
    expect429(stillLimited, 1);
    expect(stillLimited.headers['retry-after']).toBe('1');
    clock.advance(1_000);
    expect((await request(t.app).post(hookUrl('short')).send({ i: 4 })).status).toBe(200);
  });
});

describe('per-workspace rate limit (contract §6)', () => {
  const t = testApp({ RATE_LIMIT_DEFAULT: '100/60', RATE_LIMIT_WORKSPACE: '4/60' });
  const exhaust = async (paths: string[]) => {
    const seen: Array<{ limit: number; remaining: number }> = [];
    for (const path of paths) {
      const res = await request(t.app).post(hookUrl(path)).send({ path, n: seen.length });
      expect(res.status).toBe(200);
      const { limit, remaining } = expectRateLimitHeaders(res);
      seen.push({ limit, remaining });
    }
    return seen;
  };

  it('two triggers of one workspace share its bucket; the most restrictive bucket is shown and decides', async () => {
    await t.addTrigger('ws-a-one', triggerInput({ workspaceId: 'ws-a', rateLimit: { limit: 50, windowSeconds: 60 } }));
    await t.addTrigger('ws-a-two', triggerInput({ workspaceId: 'ws-a' }));
    const seen = await exhaust(['ws-a-one', 'ws-a-two', 'ws-a-one', 'ws-a-two']);
    // the workspace bucket (4) has less left than either trigger bucket (50, 100)
    expect(seen).toEqual([
      { limit: 4, remaining: 3 },
      { limit: 4, remaining: 2 },
      { limit: 4, remaining: 1 },
      { limit: 4, remaining: 0 },
    ]);
    expect429(await request(t.app).post(hookUrl('ws-a-one')).send({ late: 1 }), 4);
    expect429(await request(t.app).post(hookUrl('ws-a-two')).send({ late: 2 }), 4);
  });

  it('another workspace is not affected', async () => {
    await t.addTrigger('ws-c-one', triggerInput({ workspaceId: 'ws-c' }));
    await t.addTrigger('ws-d-one', triggerInput({ workspaceId: 'ws-d' }));
    await exhaust(['ws-c-one', 'ws-c-one', 'ws-c-one', 'ws-c-one']);
    expect429(await request(t.app).post(hookUrl('ws-c-one')).send({ late: 1 }), 4);
    const res = await request(t.app).post(hookUrl('ws-d-one')).send({ other: true });
    expect(res.status).toBe(200);
    expect(expectRateLimitHeaders(res)).toMatchObject({ limit: 4, remaining: 3 });
  });
});

describe('X-RateLimit-* on every webhook response from the rate-limit stage on (contract §6)', () => {
  const t = testApp({ MAX_BODY_BYTES: '2048' });
  let n = 0;
  /** A trigger of its own for each row: no row depends on what another sent. */
  const fresh = async () => {
    const path = `hdr-${++n}`;
    await t.addTrigger(path, triggerInput({ inputFormat: [{ name: 'n', type: 'number' }] }));
    return path;
  };
  const post = (path: string) => request(t.app).post(hookUrl(path));

  it.each<[string, (path: string) => Promise<unknown>, (r: request.Test) => request.Test, number]>([
    ['200 accepted', async () => undefined, (r) => r.send({ ok: 1 }), 200],
    [
      '200 replayed (same body as the first)',
      async (path) => expect((await post(path).send({ ok: 1 })).status).toBe(200),
      (r) => r.send({ ok: 1 }),
      200,
    ],
    ['400 malformed', async () => undefined, (r) => r.set('Content-Type', 'application/json').send('{'), 400],
    ['400 inputFormat', async () => undefined, (r) => r.send({ n: 'abc' }), 400],
    ['200 with an Idempotency-Key', async () => undefined, (r) => r.set('Idempotency-Key', 'hdr-1').send({ ok: 2 }), 200],
    [
      '409 key_reused (that key, another body)',
      async (path) => expect((await post(path).set('Idempotency-Key', 'hdr-1').send({ ok: 2 })).status).toBe(200),
      (r) => r.set('Idempotency-Key', 'hdr-1').send({ ok: 3 }),
      409,
    ],
    ['413 too large', async () => undefined, (r) => r.send({ pad: 'x'.repeat(3000) }), 413],
    ['415 unsupported', async () => undefined, (r) => r.set('Content-Type', 'application/xml').send('<a/>'), 415],
  ])('%s', async (name, before, build, status) => {
    const path = await fresh();
    await before(path);
    const res = await build(post(path));
    expect(res.status).toBe(status);
    if (name.includes('replayed')) expect(res.headers['idempotent-replayed']).toBe('true');
    expectRateLimitHeaders(res);
  });

  it('503 when the sink fails', async () => {
    const path = await fresh();
    t.sink.mode = 'fail';
    try {
      const res = await post(path).send({ fails: true });
      expect(res.status).toBe(503);
      expectRateLimitHeaders(res);
    } finally {
      t.sink.mode = 'ack';
    }
  });
});
