import request, { type Response } from 'supertest';
import { testApp } from '../helpers/app';
import { expectError, expectRateLimitHeaders, hookUrl, sleep, triggerInput, TRIGGER_TOKEN } from '../helpers/http';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** 429 as the contract describes it: Retry-After in whole seconds, details.retryAfter ISO 8601. */
function expect429(res: Response, limit: number): void {
  const error = expectError(res, 'RATE_LIMITED');
  expect(Object.keys(error.details)).toEqual(['retryAfter']);
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

  it('the allowance comes back when the window passes', async () => {
    await t.addTrigger('short', triggerInput({ rateLimit: { limit: 1, windowSeconds: 1 } }));
    expect((await request(t.app).post(hookUrl('short')).send({ i: 1 })).status).toBe(200);
    const limited = await request(t.app).post(hookUrl('short')).send({ i: 2 });
    expect429(limited, 1);
    expect(limited.headers['retry-after']).toBe('1');
    await sleep(1100);
    expect((await request(t.app).post(hookUrl('short')).send({ i: 3 })).status).toBe(200);
  });
});

describe('per-workspace rate limit (contract §6)', () => {
  const t = testApp({ RATE_LIMIT_DEFAULT: '100/60', RATE_LIMIT_WORKSPACE: '4/60' });

  beforeAll(async () => {
    await t.addTrigger('ws-a-one', triggerInput({ workspaceId: 'ws-a', rateLimit: { limit: 50, windowSeconds: 60 } }));
    await t.addTrigger('ws-a-two', triggerInput({ workspaceId: 'ws-a' }));
    await t.addTrigger('ws-b-one', triggerInput({ workspaceId: 'ws-b' }));
  });

  it('two triggers of one workspace share its bucket; the most restrictive bucket is shown and decides', async () => {
    const seen: Array<{ limit: number; remaining: number }> = [];
    for (const path of ['ws-a-one', 'ws-a-two', 'ws-a-one', 'ws-a-two']) {
      const res = await request(t.app).post(hookUrl(path)).send({ path, n: seen.length });
      expect(res.status).toBe(200);
      const { limit, remaining } = expectRateLimitHeaders(res);
      seen.push({ limit, remaining });
    }
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
    const res = await request(t.app).post(hookUrl('ws-b-one')).send({ other: true });
    expect(res.status).toBe(200);
    expect(expectRateLimitHeaders(res)).toMatchObject({ limit: 4, remaining: 3 });
  });
});

describe('X-RateLimit-* on every webhook response from the rate-limit stage on (contract §6)', () => {
  const t = testApp({ MAX_BODY_BYTES: '2048' });

  beforeAll(async () => {
    await t.addTrigger('hdr', triggerInput({ inputFormat: [{ name: 'n', type: 'number' }] }));
  });

  it.each<[string, (r: request.Test) => request.Test, number]>([
    ['200 accepted', (r) => r.send({ ok: 1 }), 200],
    ['200 replayed (same body as the first)', (r) => r.send({ ok: 1 }), 200],
    ['400 malformed', (r) => r.set('Content-Type', 'application/json').send('{'), 400],
    ['400 inputFormat', (r) => r.send({ n: 'abc' }), 400],
    ['200 with an Idempotency-Key', (r) => r.set('Idempotency-Key', 'hdr-1').send({ ok: 2 }), 200],
    ['409 key_reused (that key, another body)', (r) => r.set('Idempotency-Key', 'hdr-1').send({ ok: 3 }), 409],
    ['413 too large', (r) => r.send({ pad: 'x'.repeat(3000) }), 413],
    ['415 unsupported', (r) => r.set('Content-Type', 'application/xml').send('<a/>'), 415],
  ])('%s', async (_name, build, status) => {
    const res = await build(request(t.app).post(hookUrl('hdr')));
    expect(res.status).toBe(status);
    expectRateLimitHeaders(res);
  });

  it('503 when the sink fails', async () => {
    t.sink.mode = 'fail';
    try {
      const res = await request(t.app).post(hookUrl('hdr')).send({ fails: true });
      expect(res.status).toBe(503);
      expectRateLimitHeaders(res);
    } finally {
      t.sink.mode = 'ack';
    }
  });
});
