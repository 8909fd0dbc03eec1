import request from 'supertest';
import { testApp } from '../helpers/app';
import { TestClock } from '../helpers/clock';
import { expectError, expectRateLimitHeaders, hookUrl, triggerInput } from '../helpers/http';
import { waitUntil } from '../helpers/wait';

let n = 0;

describe('replay of a completed key (contract §5)', () => {
  const t = testApp();
  const fresh = async (extra: Parameters<typeof triggerInput>[0] = {}) => {
    const path = `idem-${++n}`;
    await t.addTrigger(path, triggerInput(extra));
    return path;
  };
  const recordsFor = (path: string) => t.sink.events().filter((e) => e.data.triggerPath === path);

  it('the same Idempotency-Key replays the first acknowledgement with Idempotent-Replayed: true, one record only', async () => {
    const path = await fresh();
    const first = await request(t.app).post(hookUrl(path)).set('Idempotency-Key', 'order-1').send({ total: 10 });
    expect(first.status).toBe(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const second = await request(t.app).post(hookUrl(path)).set('Idempotency-Key', 'order-1').send({ total: 10 });
    expect(second.status).toBe(first.status);
    expect(second.body).toEqual(first.body);
    expect(second.headers['x-event-id']).toBe(first.headers['x-event-id']);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expectRateLimitHeaders(second);
    const third = await request(t.app).post(hookUrl(path)).set('Idempotency-Key', 'order-1').send({ total: 10 });
    expect(third.headers['x-event-id']).toBe(first.headers['x-event-id']);
    expect(recordsFor(path)).toHaveLength(1);
    expect(recordsFor(path)[0].data.idempotencyKey).toBe('order-1');
  });

  it('replays a custom response (status and body) as it was', async () => {
    const path = await fresh({ response: { status: 202, body: { queued: true, note: 'thanks' } } });
    const first = await request(t.app).post(hookUrl(path)).set('Idempotency-Key', 'k').send({ a: 1 });
    expect(first.status).toBe(202);
    expect(first.body).toEqual({ queued: true, note: 'thanks' });
    const second = await request(t.app).post(hookUrl(path)).set('Idempotency-Key', 'k').send({ a: 1 });
    expect(second.status).toBe(202);
    expect(second.body).toEqual({ queued: true, note: 'thanks' });
    expect(second.headers['x-event-id']).toBe(first.headers['x-event-id']);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(recordsFor(path)).toHaveLength(1);
  });

  it('an explicit key reused with another body is 409 CONFLICT, details.reason key_reused, nothing published', async () => {
    const path = await fresh();
    expect((await request(t.app).post(hookUrl(path)).set('Idempotency-Key', 'k2').send({ a: 1 })).status).toBe(200);
    const res = await request(t.app).post(hookUrl(path)).set('Idempotency-Key', 'k2').send({ a: 2 });
    expect(expectError(res, 'CONFLICT').details).toEqual({ reason: 'key_reused' });
    expectRateLimitHeaders(res);
    expect(recordsFor(path)).toHaveLength(1);
  });

  it('keys are scoped per trigger path', async () => {
    const a = await fresh();
    const b = await fresh();
    expect((await request(t.app).post(hookUrl(a)).set('Idempotency-Key', 'shared').send({ a: 1 })).status).toBe(200);
    const other = await request(t.app).post(hookUrl(b)).set('Idempotency-Key', 'shared').send({ a: 2 });
    expect(other.status).toBe(200);
    expect(other.headers['idempotent-replayed']).toBeUndefined();
    expect(recordsFor(a)).toHaveLength(1);
    expect(recordsFor(b)).toHaveLength(1);
  });

  it('a key longer than 255 characters is a 400', async () => {
    const path = await fresh();
    const res = await request(t.app).post(hookUrl(path)).set('Idempotency-Key', 'k'.repeat(256)).send({ a: 1 });
    expectError(res, 'BAD_REQUEST');
    expect(recordsFor(path)).toHaveLength(0);
  });
});

describe('provider delivery ids and keyField (contract §5)', () => {
  const t = testApp();
  const fresh = async (extra: Parameters<typeof triggerInput>[0] = {}) => {
    const path = `dlv-${++n}`;
    await t.addTrigger(path, triggerInput(extra));
    return path;
  };
  const recordsFor = (path: string) => t.sink.events().filter((e) => e.data.triggerPath === path);

  // Contract §5: a trigger without `provider` reads Idempotency-Key, then keyField, else the
  // fingerprint. A provider's delivery-id header is unsigned there and is not the key.
  it.each(['x-github-delivery', 'webhook-id', 'svix-id', 'x-shopify-webhook-id', 'x-gitlab-event-uuid'])(
    '%s on a trigger without provider is not the key: the fingerprint is',
    async (header) => {
      const path = await fresh();
      const id = `${header}-72d3162e-cc78-11e3-81ab-4c9367dc0958`;
      const first = await request(t.app).post(hookUrl(path)).set(header, id).send({ action: 'opened' });
      expect(first.status).toBe(200);
      expect(recordsFor(path)[0].data.idempotencyKey).toMatch(/^fp:/);
      // The same body under another id is the same delivery (fingerprint): replayed.
      const again = await request(t.app).post(hookUrl(path)).set(header, `${id}-2`).send({ action: 'opened' });
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.headers['x-event-id']).toBe(first.headers['x-event-id']);
      // Another body under the same id is another event, not a key reused.
      const other = await request(t.app).post(hookUrl(path)).set(header, id).send({ action: 'closed' });
      expect(other.status).toBe(200);
      expect(recordsFor(path)).toHaveLength(2);
    },
  );

  it('keyField comes before the fingerprint, whatever delivery-id header is sent', async () => {
    const path = await fresh({ idempotency: { keyField: 'orderId' } });
    await request(t.app).post(hookUrl(path)).set('x-github-delivery', 'same').send({ orderId: 'o-1' });
    const second = await request(t.app).post(hookUrl(path)).set('x-github-delivery', 'same').send({ orderId: 'o-2' });
    expect(second.status).toBe(200);
    expect(recordsFor(path).map((e) => e.data.idempotencyKey)).toEqual(['o-1', 'o-2']);
  });

  it('Idempotency-Key comes first', async () => {
    const path = await fresh();
    await request(t.app).post(hookUrl(path)).set('Idempotency-Key', 'explicit').set('webhook-id', 'msg_1').send({ a: 1 });
    expect(recordsFor(path)[0].data.idempotencyKey).toBe('explicit');
  });

  it('keyField: a dot path into the body is the key', async () => {
    const path = await fresh({ idempotency: { keyField: 'event.id' } });
    const first = await request(t.app).post(hookUrl(path)).send({ event: { id: 'evt_1', type: 'paid' } });
    expect(first.status).toBe(200);
    expect(recordsFor(path)[0].data.idempotencyKey).toBe('evt_1');
    const again = await request(t.app).post(hookUrl(path)).send({ event: { id: 'evt_1', type: 'paid' } });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['x-event-id']).toBe(first.headers['x-event-id']);
    const reused = await request(t.app).post(hookUrl(path)).send({ event: { id: 'evt_1', type: 'refunded' } });
    expect(expectError(reused, 'CONFLICT').details).toEqual({ reason: 'key_reused' });
    const next = await request(t.app).post(hookUrl(path)).send({ event: { id: 'evt_2', type: 'paid' } });
    expect(next.status).toBe(200);
    expect(recordsFor(path).map((e) => e.data.idempotencyKey)).toEqual(['evt_1', 'evt_2']);
  });

  it('keyField with a numeric value, and a body without the field falls back to the fingerprint', async () => {
    const path = await fresh({ idempotency: { keyField: 'delivery' } });
    await request(t.app).post(hookUrl(path)).send({ delivery: 42 });
    await request(t.app).post(hookUrl(path)).send({ other: true });
    const keys = recordsFor(path).map((e) => e.data.idempotencyKey);
    expect(keys[0]).toBe('42');
    expect(keys[1]).toMatch(/^fp:[0-9a-f]{64}$/);
  });
});

describe('fingerprint dedupe without a key (contract §5)', () => {
  const clock = new TestClock();
  const t = testApp({}, { clock });
  const fresh = async (extra: Parameters<typeof triggerInput>[0] = {}) => {
    const path = `fp-${++n}`;
    await t.addTrigger(path, triggerInput(extra));
    return path;
  };
  const recordsFor = (path: string) => t.sink.events().filter((e) => e.data.triggerPath === path);

  it('an identical body without a key is a replay of the first; one record', async () => {
    const path = await fresh();
    const body = '{"ping":1}';
    const first = await request(t.app).post(hookUrl(path)).set('Content-Type', 'application/json').send(body);
    const second = await request(t.app).post(hookUrl(path)).set('Content-Type', 'application/json').send(body);
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.headers['x-event-id']).toBe(first.headers['x-event-id']);
    expect(recordsFor(path)).toHaveLength(1);
    expect(recordsFor(path)[0].data.idempotencyKey).toMatch(/^fp:[0-9a-f]{64}$/);
  });

  it('a different body, or the same bytes with another content type, is a new event (never a 409)', async () => {
    const path = await fresh();
    const a = await request(t.app).post(hookUrl(path)).set('Content-Type', 'application/json').send('{"v":1}');
    const b = await request(t.app).post(hookUrl(path)).set('Content-Type', 'application/json').send('{"v":2}');
    const c = await request(t.app).post(hookUrl(path)).set('Content-Type', 'text/plain').send('{"v":1}');
    expect([a.status, b.status, c.status]).toEqual([200, 200, 200]);
    expect(new Set([a.headers['x-event-id'], b.headers['x-event-id'], c.headers['x-event-id']]).size).toBe(3);
    expect(recordsFor(path)).toHaveLength(3);
  });

  it('a fingerprint is remembered only for its window (fingerprintTtlSeconds)', async () => {
    const path = await fresh({ idempotency: { fingerprintTtlSeconds: 1 } });
    const first = await request(t.app).post(hookUrl(path)).send({ tick: 1 });
    const dup = await request(t.app).post(hookUrl(path)).send({ tick: 1 });
    expect(dup.headers['idempotent-replayed']).toBe('true');
    clock.advance(900);
    const within = await request(t.app).post(hookUrl(path)).send({ tick: 1 });
    expect(within.headers['idempotent-replayed']).toBe('true');
    clock.advance(100);
    const later = await request(t.app).post(hookUrl(path)).send({ tick: 1 });
    expect(later.status).toBe(200);
    expect(later.headers['idempotent-replayed']).toBeUndefined();
    expect(later.headers['x-event-id']).not.toBe(first.headers['x-event-id']);
    expect(recordsFor(path)).toHaveLength(2);
  });
});

describe('a key whose first request is in flight (contract §5)', () => {
  // The first request's deadline is far away: it ends when the test releases its hung write.
  const t = testApp({ PUBLISH_TIMEOUT_MS: '60000' });

  afterAll(() => {
    t.sink.mode = 'ack';
    t.sink.giveUpHungWrites();
  });

  it('answers 409 CONFLICT with Retry-After while the first is unacknowledged', async () => {
    await t.addTrigger('slow', triggerInput());
    t.sink.mode = 'hang';
    const first = request(t.app).post(hookUrl('slow')).set('Idempotency-Key', 'in-flight-1').send({ a: 1 }).then((r) => r);
    await waitUntil(() => t.sink.hungWrites === 1, "the first request's record in a hung sink write");
    const second = await request(t.app).post(hookUrl('slow')).set('Idempotency-Key', 'in-flight-1').send({ a: 1 });
    const error = expectError(second, 'CONFLICT');
    expect(error.details).toEqual({ reason: 'in_flight' });
    expect(Number(second.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expectRateLimitHeaders(second);

    const reused = await request(t.app).post(hookUrl('slow')).set('Idempotency-Key', 'in-flight-1').send({ a: 2 });
    expect(expectError(reused, 'CONFLICT').details).toEqual({ reason: 'key_reused' });

    t.sink.mode = 'ack';
    expect(t.sink.giveUpHungWrites()).toBe(1);
    const firstRes = await first;
    expectError(firstRes, 'SERVICE_UNAVAILABLE');
  });
});
