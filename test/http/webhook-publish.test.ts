import request from 'supertest';
import { ADMIN_TOKEN, testApp } from '../helpers/app';
import { expectError, expectRateLimitHeaders, hookUrl, triggerInput, TRIGGER_TOKEN } from '../helpers/http';
import { accessLinesOf } from '../helpers/log-lines';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('the published trigger event (contract §4)', () => {
  const t = testApp({ TOPIC_TRIGGERS: 'wf.triggers.test' });

  beforeAll(async () => {
    await t.addTrigger('orders', triggerInput({ workflowId: 'wf-orders', workspaceId: 'ws-shop', auth: { token: TRIGGER_TOKEN } }));
    await t.addTrigger('custom-hdr', triggerInput({ workflowId: 'wf-c', auth: { token: TRIGGER_TOKEN, header: 'x-hook-auth' } }));
    await t.addTrigger('plain', triggerInput({ workflowId: 'wf-plain' }));
  });

  it('is a CloudEvents 1.0 structured event with the contract\'s fields, keyed by workflowId', async () => {
    const before = Date.now();
    const res = await request(t.app)
      .post(`${hookUrl('orders')}?region=eu&page=2`)
      .set('Authorization', `Bearer ${TRIGGER_TOKEN}`)
      .set('Idempotency-Key', 'evt-123')
      .set('User-Agent', 'shop/1.0')
      .set('X-Shop-Topic', 'orders/create')
      .send({ event: 'order.created', id: 'o-1', data: { total: 12.5 }, extra: true });
    expect(res.status).toBe(200);
    expect(t.sink.records).toHaveLength(1);

    const record = t.sink.records[0];
    const event = JSON.parse(record.value);
    expect(record.topic).toBe('wf.triggers.test');
    expect(record.key).toBe('wf-orders');
    expect(record.headers).toEqual({
      'content-type': 'application/cloudevents+json',
      ce_type: 'webhook.trigger',
      ce_id: event.id,
      traceparent: event.traceparent,
    });
    expect(event.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);

    expect(Object.keys(event).sort()).toEqual(['data', 'datacontenttype', 'id', 'source', 'specversion', 'subject', 'time', 'traceparent', 'type']);
    expect(event).toMatchObject({
      specversion: '1.0',
      source: '/api/webhooks/trigger/orders',
      type: 'webhook.trigger',
      subject: 'wf-orders',
      datacontenttype: 'application/json',
    });
    expect(event.id).toMatch(UUID);
    expect(event.id).toBe(res.headers['x-event-id']);
    expect(res.body).toEqual({ message: 'Webhook processed', eventId: event.id });
    expect(new Date(event.time).toISOString()).toBe(event.time);
    expect(new Date(event.time).getTime()).toBeGreaterThanOrEqual(before - 1000);
    expect(new Date(event.time).getTime()).toBeLessThanOrEqual(Date.now() + 1000);

    expect(Object.keys(event.data).sort()).toEqual(
      ['common', 'contentType', 'headers', 'idempotencyKey', 'input', 'method', 'query', 'triggerPath', 'workflowId', 'workspaceId'].sort(),
    );
    expect(event.data).toMatchObject({
      workflowId: 'wf-orders',
      workspaceId: 'ws-shop',
      triggerPath: 'orders',
      idempotencyKey: 'evt-123',
      input: { event: 'order.created', id: 'o-1', data: { total: 12.5 }, extra: true },
      common: { event: 'order.created', id: 'o-1', data: { total: 12.5 } },
      method: 'POST',
      contentType: 'application/json',
      query: { region: 'eu', page: '2' },
    });
    expect(event.data.headers).toMatchObject({ 'user-agent': 'shop/1.0', 'x-shop-topic': 'orders/create', 'content-type': 'application/json' });
    for (const name of Object.keys(event.data.headers)) expect(name).toBe(name.toLowerCase());
  });

  it('common holds only the keys among event, id, data that the body has', async () => {
    await request(t.app).post(hookUrl('plain')).send({ id: 'only-id', other: 1 });
    const a = t.sink.events().at(-1)!;
    expect(a.data.common).toEqual({ id: 'only-id' });
    await request(t.app).post(hookUrl('plain')).send({ nothing: 'here' });
    expect(t.sink.events().at(-1)!.data.common).toEqual({});
    await request(t.app).post(hookUrl('plain')).send({ data: null, event: 0 });
    expect(t.sink.events().at(-1)!.data.common).toEqual({ data: null, event: 0 });
  });

  it('contentType is null for a body-less request without Content-Type', async () => {
    await request(t.app).post(hookUrl('plain')).set('X-Marker', 'empty');
    const event = t.sink.events().at(-1)!;
    expect(event.data.headers['x-marker']).toBe('empty');
    expect(event.data.contentType).toBeNull();
    expect(event.data.input).toEqual({});
  });

  it('removes credential and signature headers, and the trigger\'s own auth header', async () => {
    const res = await request(t.app)
      .post(hookUrl('custom-hdr'))
      .set('X-Hook-Auth', TRIGGER_TOKEN)
      .set('Authorization', 'Basic dXNlcjpwYXNz')
      .set('Cookie', 'session=abc123')
      .set('Proxy-Authorization', 'Basic cHJveHk6cHc=')
      .set('X-Api-Key', 'api-key-value')
      .set('X-Hub-Signature-256', 'sha256=deadbeef')
      .set('X-Hub-Signature', 'sha1=deadbeef')
      .set('X-GitHub-Event', 'push')
      .send({ a: 1 });
    expect(res.status).toBe(200);
    const event = t.sink.events().at(-1)!;
    const names = Object.keys(event.data.headers);
    for (const removed of ['x-hook-auth', 'authorization', 'cookie', 'proxy-authorization', 'x-api-key', 'x-hub-signature-256', 'x-hub-signature']) {
      expect(names).not.toContain(removed);
    }
    expect(event.data.headers['x-github-event']).toBe('push');
    const raw = t.sink.records.at(-1)!.value;
    for (const secret of [TRIGGER_TOKEN, 'dXNlcjpwYXNz', 'abc123', 'api-key-value', 'deadbeef']) expect(raw).not.toContain(secret);
  });

  it('publishes none of the credential headers and query parameters a list of exact names missed', async () => {
    const res = await request(t.app)
      .post(`${hookUrl('plain')}?key=q-key-1&auth=q-auth-1&page=3`)
      .set('X-Auth', 'h-auth-1')
      .set('X-Access-Key', 'h-access-1')
      .set('X-Webhook-Key', 'h-webhook-1')
      .set('X-Shopify-Hmac-Sha256', 'h-hmac-1')
      .set('X-Shopify-Topic', 'orders/create')
      .send({ a: 1 });
    expect(res.status).toBe(200);
    const event = t.sink.events().at(-1)!;
    expect(event.data.headers['x-shopify-topic']).toBe('orders/create');
    expect(event.data.query).toEqual({ page: '3' });
    const raw = t.sink.records.at(-1)!.value;
    for (const secret of ['q-key-1', 'q-auth-1', 'h-auth-1', 'h-access-1', 'h-webhook-1', 'h-hmac-1']) expect(raw).not.toContain(secret);
  });

  it('publishes only the headers a trigger lists in publishHeaders', async () => {
    await t.addTrigger('github-only', triggerInput({ workflowId: 'wf-gh', publishHeaders: ['x-github-event', 'x-github-delivery'] }));
    const res = await request(t.app)
      .post(hookUrl('github-only'))
      .set('X-GitHub-Event', 'push')
      .set('X-GitHub-Delivery', 'd-9')
      .set('X-Internal-Routing', 'tenant-7')
      .set('User-Agent', 'GitHub-Hookshot/1')
      .send({ a: 1 });
    expect(res.status).toBe(200);
    expect(t.sink.events().at(-1)!.data.headers).toEqual({ 'x-github-event': 'push', 'x-github-delivery': 'd-9' });
  });

  it('never puts the token in a sink record or a log line (accepted, refused and replayed requests)', async () => {
    const calls: Array<[string, request.Test, number]> = [
      ['secret-1', request(t.app).post(hookUrl('orders')).set('Authorization', `Bearer ${TRIGGER_TOKEN}`).set('Idempotency-Key', 'z').send({ a: 1 }), 200],
      ['secret-2', request(t.app).post(hookUrl('orders')).set('Authorization', `Bearer ${TRIGGER_TOKEN}`).set('Idempotency-Key', 'z').send({ a: 1 }), 200],
      ['secret-3', request(t.app).post(hookUrl('orders')).set('Authorization', `Bearer ${TRIGGER_TOKEN}-wrong`).send({ a: 1 }), 401],
      ['secret-4', request(t.app).post(hookUrl('custom-hdr')).set('X-Hook-Auth', TRIGGER_TOKEN).send({ b: 2 }), 200],
      ['secret-5', request(t.app).post(hookUrl('custom-hdr')).set('Authorization', `Bearer ${TRIGGER_TOKEN}`).send({ b: 2 }), 401],
      ['secret-6', request(t.admin).get('/admin/triggers').set('Authorization', `Bearer ${ADMIN_TOKEN}`), 200],
      ['secret-7', request(t.admin).put('/admin/triggers/new-one').set('Authorization', `Bearer ${ADMIN_TOKEN}`).send(triggerInput({ auth: { token: `${TRIGGER_TOKEN}-2` } })), 200],
    ];
    const statuses: number[] = [];
    for (const [id, call] of calls) statuses.push((await call.set('X-Request-Id', id)).status);
    expect(statuses).toEqual(calls.map(([, , status]) => status));
    // The lines searched below are there: one access line per request, with its status.
    const lines = await accessLinesOf(t.logLines, calls.map(([id]) => id));
    expect(lines.map((line) => line.status)).toEqual(calls.map(([, , status]) => status));
    expect(t.sink.records.length).toBeGreaterThan(3);
    const sinkText = JSON.stringify(t.sink.records);
    const logText = t.logLines.join('');
    for (const secret of [TRIGGER_TOKEN, ADMIN_TOKEN]) {
      expect(sinkText).not.toContain(secret);
      expect(logText).not.toContain(secret);
    }
  });

  it('answers with the trigger\'s custom response, with X-Event-Id', async () => {
    await t.addTrigger('custom-ack', triggerInput({ workflowId: 'wf-ack', response: { status: 201, body: { ok: true, list: [1, 'two'] } } }));
    const res = await request(t.app).post(hookUrl('custom-ack')).send({ a: 1 });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ ok: true, list: [1, 'two'] });
    expect(res.headers['x-event-id']).toBe(t.sink.events().at(-1)!.id);
    expect(res.headers['x-request-id']).toBeTruthy();
  });

  it('answers a custom response body that is a JSON string or null as JSON', async () => {
    await t.addTrigger('custom-str', triggerInput({ response: { status: 202, body: 'accepted' } }));
    const res = await request(t.app).post(hookUrl('custom-str')).send({ a: 1 });
    expect(res.status).toBe(202);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.text).toBe('"accepted"');

    await t.addTrigger('custom-null', triggerInput({ response: { status: 200, body: null } }));
    const nullRes = await request(t.app).post(hookUrl('custom-null')).send({ a: 1 });
    expect(nullRes.status).toBe(200);
    expect(nullRes.text).toBe('null');
    expect(nullRes.headers['x-event-id']).toBeTruthy();
  });

  it('answers a custom 204 with no content at all: no body, no Content-Length, still X-Event-Id', async () => {
    await t.addTrigger('custom-204', triggerInput({ response: { status: 204, body: { ignored: true } } }));
    const res = await request(t.app).post(hookUrl('custom-204')).send({ a: 1 });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(res.headers['content-length']).toBeUndefined();
    expect(res.headers['x-event-id']).toBe(t.sink.events().at(-1)!.id);
  });
});

describe('sink failures: 503, nothing remembered (contract §2.8)', () => {
  const t = testApp({ PUBLISH_TIMEOUT_MS: '300' });

  beforeAll(async () => {
    await t.addTrigger('flaky', triggerInput({ workflowId: 'wf-flaky' }));
  });

  afterEach(() => {
    t.sink.mode = 'ack';
    t.sink.giveUpHungWrites();
  });

  it('a failing sink: 503 SERVICE_UNAVAILABLE with Retry-After; the retry with the same key goes through', async () => {
    t.sink.mode = 'fail';
    const res = await request(t.app).post(hookUrl('flaky')).set('Idempotency-Key', 'retry-1').send({ n: 1 });
    expectError(res, 'SERVICE_UNAVAILABLE');
    expect(res.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
    expect(res.headers['x-event-id']).toBeUndefined();
    expectRateLimitHeaders(res);
    expect(t.sink.records).toHaveLength(0);

    t.sink.mode = 'ack';
    const retry = await request(t.app).post(hookUrl('flaky')).set('Idempotency-Key', 'retry-1').send({ n: 1 });
    expect(retry.status).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(t.sink.records).toHaveLength(1);
    expect(t.sink.events()[0].id).toBe(retry.headers['x-event-id']);
  });

  it('a sink that does not acknowledge within PUBLISH_TIMEOUT_MS: 503; once it answers again, the retry goes through', async () => {
    t.sink.mode = 'hang';
    const res = await request(t.app).post(hookUrl('flaky')).set('Idempotency-Key', 'retry-2').send({ n: 2 });
    expectError(res, 'SERVICE_UNAVAILABLE');
    expect(res.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
    expect(t.sink.writes).toBeGreaterThan(0);

    // the hung request fails at the client's own timeout, the sink is healthy again
    expect(t.sink.giveUpHungWrites()).toBe(1);
    t.sink.mode = 'ack';
    const before = t.sink.records.length;
    const retry = await request(t.app).post(hookUrl('flaky')).set('Idempotency-Key', 'retry-2').send({ n: 2 });
    expect(retry.status).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(t.sink.records).toHaveLength(before + 1);
  });

  it('a fingerprinted request (no key) that got 503 is not deduplicated on retry', async () => {
    t.sink.mode = 'fail';
    expect((await request(t.app).post(hookUrl('flaky')).send({ fp: 1 })).status).toBe(503);
    t.sink.mode = 'ack';
    const retry = await request(t.app).post(hookUrl('flaky')).send({ fp: 1 });
    expect(retry.status).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
  });
});

describe('a published record over MAX_RECORD_BYTES (contract §2.5)', () => {
  const t = testApp({ MAX_RECORD_BYTES: '2048', MAX_BODY_BYTES: '65536' });

  it('answers 413 PAYLOAD_TOO_LARGE and publishes nothing; a smaller body goes through', async () => {
    await t.addTrigger('rec', triggerInput());
    const res = await request(t.app).post(hookUrl('rec')).set('Idempotency-Key', 'big').send({ pad: 'x'.repeat(3000) });
    expect(expectError(res, 'PAYLOAD_TOO_LARGE').details).toEqual({ reason: 'record_too_large', limit: 'the published record' });
    expect(t.sink.records).toHaveLength(0);
    const small = await request(t.app).post(hookUrl('rec')).set('Idempotency-Key', 'small').send({ pad: 'x' });
    expect(small.status).toBe(200);
    expect(t.sink.records).toHaveLength(1);
  });
});
