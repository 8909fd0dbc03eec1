import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import request from 'supertest';
import { ADMIN_TOKEN, testApp } from '../helpers/app';
import { expectError, hookUrl, triggerInput, TRIGGER_TOKEN } from '../helpers/http';
import { waitUntil } from '../helpers/wait';

/** Contract §13: every request to a registered trigger or channel leaves an entry. */
type App = ReturnType<typeof testApp>;
const auth = { Authorization: `Bearer ${ADMIN_TOKEN}` };

async function deliveries(t: App, path: string, query = '') {
  const res = await request(t.admin).get(`/admin/triggers/${path}/deliveries${query}`).set(auth);
  expect(res.status).toBe(200);
  return res.body as { data: Array<Record<string, any>>; nextCursor: string | null };
}

/** The entry of one request, once it is written (it is written when the response is done). */
async function entryOf(t: App, path: string, requestId: string, kind: 'triggers' | 'channels' = 'triggers') {
  let found: Record<string, any> | undefined;
  await waitUntil(async () => {
    const page = await request(t.admin).get(`/admin/${kind}/${path}/deliveries?limit=500`).set(auth);
    found = page.body.data?.find((e: { requestId: string }) => e.requestId === requestId);
    return found !== undefined;
  }, `the log entry of ${requestId}`);
  return found!;
}

describe('the delivery log (contract §13)', () => {
  const t = testApp();
  beforeAll(async () => {
    await t.addTrigger('log', triggerInput({ auth: { token: TRIGGER_TOKEN }, rateLimit: { limit: 3, windowSeconds: 60 }, schema: { type: 'object', required: ['n'] } }));
    await t.addTrigger('asleep', triggerInput({ deployed: false }));
  });
  const post = (path: string, body: unknown, token = TRIGGER_TOKEN) =>
    request(t.app).post(hookUrl(path)).set('Authorization', `Bearer ${token}`).send(body as object);

  it('records each outcome under the request id the sender saw', async () => {
    const accepted = await post('log', { n: 1 }).set('Idempotency-Key', 'key-1');
    const duplicate = await post('log', { n: 1 }).set('Idempotency-Key', 'key-1');
    const unauthorized = await post('log', { n: 1 }, 'wrong-token-123');
    const invalid = await post('log', { m: 1 });
    const limited = await post('log', { n: 2 });
    const notDeployed = await request(t.app).post(hookUrl('asleep')).send({});
    expect([accepted, duplicate, unauthorized, invalid, limited, notDeployed].map((r) => r.status)).toEqual([200, 200, 401, 400, 429, 404]);

    const id = (res: request.Response) => res.headers['x-request-id'];
    expect(await entryOf(t, 'log', id(accepted))).toEqual({
      at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      requestId: id(accepted),
      status: 200,
      outcome: 'accepted',
      eventId: accepted.headers['x-event-id'],
      idempotencyKey: 'key-1',
      bytes: Buffer.byteLength('{"n":1}'),
      ms: expect.any(Number),
      clientIp: expect.any(String),
    });
    expect(await entryOf(t, 'log', id(duplicate))).toMatchObject({ status: 200, outcome: 'duplicate', eventId: accepted.headers['x-event-id'] });
    expect(await entryOf(t, 'log', id(unauthorized))).toMatchObject({ status: 401, outcome: 'unauthorized', reason: 'credentials_invalid' });
    expect(await entryOf(t, 'log', id(invalid))).toMatchObject({
      status: 400,
      outcome: 'invalid',
      reason: 'schema_invalid',
      diagnostics: { errors: [{ instancePath: '', keyword: 'required', message: "must have required property 'n'" }] },
    });
    expect(await entryOf(t, 'log', id(limited))).toMatchObject({ status: 429, outcome: 'rate_limited', reason: 'rate_limited' });
    expect(await entryOf(t, 'asleep', id(notDeployed))).toMatchObject({ status: 404, outcome: 'not_found' });
    const all = await deliveries(t, 'log');
    expect(all.data.map((e) => e.requestId)).toEqual([limited, invalid, unauthorized, duplicate, accepted].map(id));
  });

  it('shows the key on a 409 too: a key reused with another body (contract §13: the key it was claimed under)', async () => {
    await t.addTrigger('reuse', triggerInput());
    const first = await request(t.app).post(hookUrl('reuse')).set('Idempotency-Key', 'key-reused').send({ n: 1 });
    const reused = await request(t.app).post(hookUrl('reuse')).set('Idempotency-Key', 'key-reused').send({ n: 2 });
    expect([first.status, reused.status]).toEqual([200, 409]);
    expect(await entryOf(t, 'reuse', reused.headers['x-request-id'])).toMatchObject({ status: 409, reason: 'key_reused', idempotencyKey: 'key-reused' });
  });

  it('logs a sender that hangs up mid-body as aborted: status 499, the bytes that arrived', async () => {
    await t.addTrigger('hangup', triggerInput());
    const server = createServer(t.app).listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
      await once(socket, 'connect');
      socket.write(`POST ${hookUrl('hangup')} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"n":1`);
      // The gateway is reading the body once the first 6 bytes are in; then the sender goes.
      await waitUntil(async () => (await deliveries(t, 'hangup')).data.length > 0 || t.deps.bodyBudget.inUse > 0, 'the body being read');
      socket.destroy();
      let entry: Record<string, any> | undefined;
      await waitUntil(async () => (entry = (await deliveries(t, 'hangup')).data[0]) !== undefined, 'the aborted entry');
      expect(entry).toMatchObject({ status: 499, outcome: 'aborted', bytes: 6 });
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('logs a method the route refuses (405) on a registered trigger and channel, with the same answer as for an unknown one', async () => {
    await t.addTrigger('put-me', triggerInput());
    await t.addChannel('put-ch', { provider: 'telegram', workspaceId: 'ws-1', inboxId: 'in-1', secretToken: 'telegram-secret-405' });
    const onTrigger = await request(t.app).put(hookUrl('put-me')).send({});
    const onUnknown = await request(t.app).put(hookUrl('never-put')).send({});
    const onChannel = await request(t.app).delete('/api/channels/telegram/put-ch');
    for (const res of [onTrigger, onUnknown, onChannel]) expectError(res, 'METHOD_NOT_ALLOWED');
    expect(onTrigger.body).toEqual(onUnknown.body);
    expect(await entryOf(t, 'put-me', onTrigger.headers['x-request-id'])).toMatchObject({ status: 405, outcome: 'method_not_allowed' });
    expect(await entryOf(t, 'put-ch', onChannel.headers['x-request-id'], 'channels')).toMatchObject({ status: 405, outcome: 'method_not_allowed' });
  });

  it('logs nothing for a path no trigger has, and answers 404 for its log', async () => {
    await request(t.app).post(hookUrl('never-registered')).send({});
    const res = await request(t.admin).get('/admin/triggers/never-registered/deliveries').set(auth);
    expect(res.status).toBe(404);
  });

  it('pages newest first with an opaque cursor', async () => {
    await t.addTrigger('paged', triggerInput());
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await request(t.app).post(hookUrl('paged')).send({ i })).headers['x-request-id']);
    await waitUntil(async () => (await deliveries(t, 'paged')).data.length === 5, 'five entries');
    const first = await deliveries(t, 'paged', '?limit=2');
    const second = await deliveries(t, 'paged', `?limit=2&cursor=${first.nextCursor}`);
    const third = await deliveries(t, 'paged', `?limit=2&cursor=${second.nextCursor}`);
    expect([first, second, third].map((page) => page.data.map((e) => e.requestId))).toEqual([
      [ids[4], ids[3]],
      [ids[2], ids[1]],
      [ids[0]],
    ]);
    expect(third.nextCursor).toBeNull();
    const bad = await request(t.admin).get('/admin/triggers/paged/deliveries?cursor=bm90LWEtY3Vyc29y').set(auth);
    expect(bad.status).toBe(400);
  });
});

describe('DELIVERY_LOG_MAX', () => {
  it('keeps only the last DELIVERY_LOG_MAX entries of each trigger', async () => {
    const t = testApp({ DELIVERY_LOG_MAX: '3' });
    await t.addTrigger('capped', triggerInput());
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push((await request(t.app).post(hookUrl('capped')).send({ i })).headers['x-request-id']);
    await waitUntil(async () => (await deliveries(t, 'capped')).data[0]?.requestId === ids[5], 'the last entry');
    expect((await deliveries(t, 'capped')).data.map((e) => e.requestId)).toEqual([ids[5], ids[4], ids[3]]);
  });

  it('0 turns the log off: requests are served, the log stays empty', async () => {
    const t = testApp({ DELIVERY_LOG_MAX: '0' });
    await t.addTrigger('off', triggerInput());
    expect(t.deps.deliveryLog).toBeUndefined();
    expect((await request(t.app).post(hookUrl('off')).send({})).status).toBe(200);
    expect(await deliveries(t, 'off')).toEqual({ data: [], nextCursor: null });
  });
});

describe('signature diagnostics (contract §13)', () => {
  const t = testApp();
  const SECRETS = ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD'];
  const BODY = '{"type":"invoice.paid","n":1}';
  beforeAll(async () => {
    await t.addTrigger('sw', triggerInput({ provider: { name: 'standard-webhooks', secrets: SECRETS } }));
    await t.addTrigger('gh', triggerInput({ provider: { name: 'github', secrets: ['gh-secret-value'] } }));
  });

  function standardDelivery(signedWith: string, at: Date) {
    const signature = new StandardWebhook(signedWith).sign('msg_1', at, BODY);
    return request(t.app)
      .post(hookUrl('sw'))
      .set('Content-Type', 'application/json')
      .set('webhook-id', 'msg_1')
      .set('webhook-timestamp', String(Math.floor(at.getTime() / 1000)))
      .set('webhook-signature', `${signature} v1,${Buffer.alloc(32).toString('base64')}`)
      .send(BODY);
  }

  it('an accepted signed delivery shows its provider id, kind and key, and its replay the same', async () => {
    const first = await standardDelivery(SECRETS[1], new Date());
    const again = await standardDelivery(SECRETS[1], new Date());
    expect([first.status, again.status]).toEqual([200, 200]);
    const facts = { deliveryId: 'msg_1', kind: 'invoice.paid', idempotencyKey: 'msg_1' };
    expect(await entryOf(t, 'sw', first.headers['x-request-id'])).toMatchObject({ outcome: 'accepted', ...facts });
    expect(await entryOf(t, 'sw', again.headers['x-request-id'])).toMatchObject({ outcome: 'duplicate', ...facts });
  });

  it('says why a stale Standard Webhooks delivery was refused: its timestamp, the skew and the tolerance', async () => {
    const at = new Date(Date.now() - 3600_000);
    const res = await standardDelivery(SECRETS[0], at);
    expect(res.status).toBe(401);
    const entry = await entryOf(t, 'sw', res.headers['x-request-id']);
    expect(entry).toMatchObject({ status: 401, reason: 'timestamp_out_of_tolerance' });
    expect(entry.diagnostics).toEqual({
      scheme: 'standard-webhooks',
      headerSeen: 'webhook-signature',
      signaturesInHeader: 2,
      encodingLooksLike: 'base64',
      timestamp: Math.floor(at.getTime() / 1000),
      skewSeconds: expect.any(Number),
      toleranceSeconds: 300,
      secretsTried: 2,
      // Refused on its headers, before the body was read: its size as declared, no hash.
      bodySha256: null,
      bodyBytes: Buffer.byteLength(BODY),
    });
    expect(entry.diagnostics.skewSeconds).toBeGreaterThanOrEqual(3600);
  });

  it('never shows a secret or the signature the gateway expected in the log', async () => {
    const now = new Date();
    const wrong = await standardDelivery('whsec_dGhpcy1pcy1ub3QtdGhlLXNlY3JldC0xMjM0NTY3OA==', now);
    expect(wrong.status).toBe(401);
    const entry = await entryOf(t, 'sw', wrong.headers['x-request-id']);
    expect(entry).toMatchObject({
      reason: 'signature_invalid',
      diagnostics: { secretsTried: 2, encodingLooksLike: 'base64', bodySha256: createHash('sha256').update(BODY).digest('hex') },
    });
    const page = await request(t.admin).get('/admin/triggers/sw/deliveries').set(auth);
    const expected = SECRETS.map((secret) => new StandardWebhook(secret).sign('msg_1', now, BODY).slice('v1,'.length));
    for (const secret of [...SECRETS, ...SECRETS.map((s) => s.slice('whsec_'.length)), ...expected]) expect(page.text).not.toContain(secret);
    expect(page.text).not.toContain(BODY.slice(1, 20));
  });

  it('reads a hex signature header (GitHub) and one refused before the body was read', async () => {
    const hex = await request(t.app).post(hookUrl('gh')).set('X-GitHub-Event', 'push').set('X-GitHub-Delivery', 'd-1')
      .set('X-Hub-Signature-256', `sha256=${'ab'.repeat(32)}`).set('Content-Type', 'application/json').send('{"a":1}');
    expect(hex.status).toBe(401);
    expect((await entryOf(t, 'gh', hex.headers['x-request-id'])).diagnostics).toEqual({
      scheme: 'github',
      headerSeen: 'x-hub-signature-256',
      signaturesInHeader: 1,
      encodingLooksLike: 'hex',
      secretsTried: 1,
      bodySha256: createHash('sha256').update('{"a":1}').digest('hex'),
      bodyBytes: 7,
    });
    const unsigned = await request(t.app).post(hookUrl('gh')).set('X-GitHub-Event', 'push').set('Content-Type', 'application/json').send('{"a":1}');
    expect(unsigned.status).toBe(401);
    expect((await entryOf(t, 'gh', unsigned.headers['x-request-id'])).diagnostics).toEqual({
      scheme: 'github',
      headerSeen: null,
      signaturesInHeader: 0,
      encodingLooksLike: 'other',
      secretsTried: 1,
      bodySha256: null,
      bodyBytes: 7,
    });
  });

  it('logs a channel delivery with a wrong secret token (Telegram) under the channel', async () => {
    const secretToken = 'telegram-secret-token-1234567890';
    await t.addChannel('tg', { provider: 'telegram', workspaceId: 'ws-1', inboxId: 'in-1', secretToken });
    const res = await request(t.app).post('/api/channels/telegram/tg').set('X-Telegram-Bot-Api-Secret-Token', 'not-the-right-one').send({ update_id: 1 });
    expect(res.status).toBe(401);
    const entry = await entryOf(t, 'tg', res.headers['x-request-id'], 'channels');
    expect(entry).toMatchObject({
      reason: 'signature_invalid',
      diagnostics: { scheme: 'telegram', headerSeen: 'x-telegram-bot-api-secret-token', signaturesInHeader: 1, secretsTried: 1 },
    });
    const page = await request(t.admin).get('/admin/channels/tg/deliveries').set(auth);
    expect(page.text).not.toContain(secretToken);
    expect(page.text).not.toContain('not-the-right-one');
  });
});
