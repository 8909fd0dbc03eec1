import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { signWhatsAppBody } from '../helpers/meta-signature';
import type { ChannelInput } from '../../src/registry/schemas';
import { testApp } from '../helpers/app';
import { waitUntil } from '../helpers/wait';

const CHANNEL_ID = 'ch_wa_1';
const APP_SECRET = 'app-secret-for-whatsapp-tests';
const VERIFY_TOKEN = 'verify-token-for-whatsapp-tests';
const PHONE_NUMBER_ID = '106540352242922';
const URL = `/api/channels/whatsapp/${CHANNEL_ID}`;

const channelInput: ChannelInput = {
  provider: 'whatsapp',
  workspaceId: 'ws_1',
  inboxId: 'inbox_1',
  phoneNumberId: PHONE_NUMBER_ID,
  verifyToken: VERIFY_TOKEN,
  appSecret: APP_SECRET,
};

/** The fixture exactly as stored on disk: these bytes are signed and sent unchanged. */
const BATCH = readFileSync(join(__dirname, '..', 'fixtures', 'whatsapp', 'batch.json'));
const BATCH_SIGNATURE = signWhatsAppBody(BATCH, APP_SECRET);

/** What batch.json yields: every message and status of the channel's changes, in order. */
const BATCH_EVENTS = [
  { type: 'chat.message', subject: '16505551234', messageId: 'wamid.BATCH.A1' },
  { type: 'chat.tap', subject: '447700900123', messageId: 'wamid.BATCH.A2' },
  { type: 'chat.message', subject: '16505551234', messageId: 'wamid.BATCH.A3' },
  { type: 'chat.status', subject: '447700900123', messageId: 'wamid.BATCH.OUT1', status: 'sent' },
  { type: 'chat.status', subject: '447700900123', messageId: 'wamid.BATCH.OUT1', status: 'delivered' },
  { type: 'chat.tap', subject: '447700900123', messageId: 'wamid.BATCH.B1' },
  { type: 'chat.status', subject: '447700900123', messageId: 'wamid.BATCH.OUT1', status: 'read' },
  { type: 'chat.status', subject: '16505551234', messageId: 'wamid.BATCH.OUT3', status: 'failed' },
];

type TestApp = ReturnType<typeof testApp>;

/** superagent would JSON.stringify a Buffer sent as application/json; the bytes must go as they are. */
const asIs = ((body: Buffer) => body) as unknown as (body: unknown) => string;

function postSigned(t: TestApp, body: Buffer | string, signature = signWhatsAppBody(body, APP_SECRET), url = URL) {
  return request(t.app)
    .post(url)
    .set('Content-Type', 'application/json')
    .set('X-Hub-Signature-256', signature)
    .serialize(asIs)
    .send(Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8'));
}

function handshake(t: TestApp, query: Record<string, string>, url = URL) {
  return request(t.app).get(url).query(query);
}

function expectError(res: request.Response, status: number, code: string): void {
  expect(res.status).toBe(status);
  expect(res.body.error.code).toBe(code);
  expect(typeof res.body.error.message).toBe('string');
  expect(res.headers['x-request-id']).toBeDefined();
}

/** A minimal signed-ready body with one text message per id, for this channel's number. */
function textBody(ids: string[], text = 'hi'): string {
  return JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: '102290129340398',
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '15550783881', phone_number_id: PHONE_NUMBER_ID },
              contacts: [{ profile: { name: 'Sheena Nelson' }, wa_id: '16505551234' }],
              messages: ids.map((id) => ({ from: '16505551234', id, timestamp: '1749416383', type: 'text', text: { body: text } })),
            },
          },
        ],
      },
    ],
  });
}

/** The access log line is written on 'finish'; wait until it is there before reading logLines. */
async function logFor(t: TestApp, path: string): Promise<string> {
  await waitUntil(() => t.logLines.some((line) => line.includes(`"path":"${path}"`)), `an access log line for ${path}`);
  return t.logLines.join('');
}

async function freshApp(env: Record<string, string> = {}): Promise<TestApp> {
  const t = testApp(env);
  await t.addChannel(CHANNEL_ID, channelInput);
  return t;
}

describe('WhatsApp verification handshake (contract §3 GET)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await freshApp();
  });

  it('answers the right verify token with 200 text/plain and the challenge as the body', async () => {
    const res = await handshake(t, { 'hub.mode': 'subscribe', 'hub.verify_token': VERIFY_TOKEN, 'hub.challenge': '1158201444' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toBe('1158201444');
    expect(res.headers['x-ratelimit-limit']).toBeDefined();
  });

  it('answers a wrong verify token with 403 FORBIDDEN and does not echo the challenge', async () => {
    const res = await handshake(t, { 'hub.mode': 'subscribe', 'hub.verify_token': 'wrong-token', 'hub.challenge': '1158201444' });
    expectError(res, 403, 'FORBIDDEN');
    expect(res.text).not.toContain('1158201444');
  });

  it.each([
    ['no parameters', {}],
    ['no challenge', { 'hub.mode': 'subscribe', 'hub.verify_token': VERIFY_TOKEN }],
    ['no token', { 'hub.mode': 'subscribe', 'hub.challenge': '42' }],
    ['another mode', { 'hub.mode': 'unsubscribe', 'hub.verify_token': VERIFY_TOKEN, 'hub.challenge': '42' }],
  ])('answers %s with 400 BAD_REQUEST', async (_name, query) => {
    expectError(await handshake(t, query as Record<string, string>), 400, 'BAD_REQUEST');
  });

  it('answers 400 for a repeated parameter rather than picking one', async () => {
    const res = await request(t.app).get(
      `${URL}?hub.mode=subscribe&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=1&hub.challenge=2`,
    );
    expectError(res, 400, 'BAD_REQUEST');
  });

  it.each([
    ['markup', '<script>alert(1)</script>'],
    ['spaces', 'a b'],
    ['too long', 'a'.repeat(257)],
  ])('refuses to reflect a challenge with %s (400, not echoed)', async (_name, challenge) => {
    const res = await handshake(t, { 'hub.mode': 'subscribe', 'hub.verify_token': VERIFY_TOKEN, 'hub.challenge': challenge });
    expectError(res, 400, 'BAD_REQUEST');
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.text).not.toContain(challenge);
  });

  it('echoes a 256-character challenge of the safe alphabet', async () => {
    const challenge = `${'Ab0_-.'.repeat(42)}xyzw`;
    expect(challenge).toHaveLength(256);
    const res = await handshake(t, { 'hub.mode': 'subscribe', 'hub.verify_token': VERIFY_TOKEN, 'hub.challenge': challenge });
    expect(res.status).toBe(200);
    expect(res.text).toBe(challenge);
  });

  it('answers 404 for an unknown channel and for an id outside the alphabet, even with a valid token', async () => {
    const query = { 'hub.mode': 'subscribe', 'hub.verify_token': VERIFY_TOKEN, 'hub.challenge': '42' };
    expectError(await handshake(t, query, '/api/channels/whatsapp/nope'), 404, 'NOT_FOUND');
    expectError(await handshake(t, query, '/api/channels/whatsapp/bad.id'), 404, 'NOT_FOUND');
    expectError(await handshake(t, query, `/api/channels/whatsapp/${'x'.repeat(129)}`), 404, 'NOT_FOUND');
  });

  it.each(['put', 'delete', 'patch'] as const)('answers %s with 405 and Allow: GET, POST, known channel or not', async (method) => {
    const known = await request(t.app)[method](URL);
    const unknown = await request(t.app)[method]('/api/channels/whatsapp/nope');
    expectError(known, 405, 'METHOD_NOT_ALLOWED');
    expectError(unknown, 405, 'METHOD_NOT_ALLOWED');
    expect(known.headers.allow).toBe('GET, POST');
    expect(unknown.body).toEqual(known.body);
  });

  it('never logs the verify token (right or wrong)', async () => {
    await handshake(t, { 'hub.mode': 'subscribe', 'hub.verify_token': VERIFY_TOKEN, 'hub.challenge': '7' });
    await handshake(t, { 'hub.mode': 'subscribe', 'hub.verify_token': 'a-wrong-guess-token', 'hub.challenge': '7' });
    const log = await logFor(t, URL);
    expect(log).toContain('"route":"whatsapp"');
    expect(log).not.toContain(VERIFY_TOKEN);
    expect(log).not.toContain('a-wrong-guess-token');
    expect(log).not.toContain('verify_token');
  });
});

describe('WhatsApp signed deliveries (contract §3 POST, §4 chat events)', () => {
  it('publishes exactly the expected events of a signed batch, in one sink write', async () => {
    // The linger runs from the first event's publish: building the other seven must fall inside
    // it even on a busy CPU (a 5 ms linger did not always: two writes).
    const t = await freshApp({ BATCH_LINGER_MS: '250' });
    const res = await postSigned(t, BATCH, BATCH_SIGNATURE);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: 8, published: 8, duplicates: 0, foreign: 1, invalid: 0, ignored: 0 });
    expect(res.headers['x-request-id']).toBeDefined();
    expect(t.sink.writes).toBe(1);

    const { records } = t.sink;
    expect(records).toHaveLength(BATCH_EVENTS.length);
    const events = t.sink.events();
    records.forEach((record, i) => {
      const expected = BATCH_EVENTS[i];
      const event = events[i];
      expect(record.topic).toBe('chat.inbound');
      expect(record.key).toBe(`${CHANNEL_ID}:${expected.subject}`);
      expect(record.headers).toEqual({
        'content-type': 'application/cloudevents+json',
        ce_type: expected.type,
        ce_id: event.id,
        traceparent: event.traceparent,
      });
      expect(event).toMatchObject({
        specversion: '1.0',
        source: `/api/channels/whatsapp/${CHANNEL_ID}`,
        type: expected.type,
        subject: expected.subject,
        datacontenttype: 'application/json',
      });
      expect(event.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(new Date(event.time).toISOString()).toBe(event.time);
      expect(event.data).toMatchObject({
        workspaceId: 'ws_1',
        inboxId: 'inbox_1',
        channelId: CHANNEL_ID,
        provider: 'whatsapp',
        messageId: expected.messageId,
      });
      expect(event.data.contact.phone).toBe(expected.subject);
      if (expected.status) expect(event.data.status).toBe(expected.status);
    });
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);

    // A few data fields in full.
    expect(events[0].data).toMatchObject({
      contact: { phone: '16505551234', name: 'Sheena Nelson' },
      timestamp: '2025-06-08T20:59:43.000Z',
      replyTo: null,
      message: { content: 'Hello, is anyone there?', contentType: 'text' },
    });
    expect(events[1].data).toMatchObject({
      contact: { phone: '447700900123', name: 'Raj Patel' },
      replyTo: 'wamid.BATCH.OUT1',
      value: 'cancel-button',
      message: {
        content: 'Cancel',
        contentAttributes: { interactive: { type: 'button_reply', button_reply: { id: 'cancel-button', title: 'Cancel' } } },
      },
    });
    expect(events[5].data).toMatchObject({
      replyTo: 'wamid.BATCH.OUT2',
      value: 'slot-0930',
      message: {
        content: '09:30',
        contentAttributes: {
          interactive: { type: 'list_reply', list_reply: { id: 'slot-0930', title: '09:30', description: 'Tomorrow morning' } },
        },
      },
    });
    expect(events[7].data).toMatchObject({
      status: 'failed',
      recipient: '16505551234',
      errors: [expect.objectContaining({ code: 131047, title: 'Re-engagement message' })],
    });

    // The change for another phone_number_id is not published, but counted and logged.
    expect(events.map((e) => e.data.messageId)).not.toContain('wamid.BATCH.FOREIGN');
    expect(records.some((r) => r.value.includes('For the other number'))).toBe(false);
    const metrics = await request(t.admin).get('/metrics');
    expect(metrics.text).toMatch(/^igw_whatsapp_foreign_changes_total 1$/m);
    expect(metrics.text).toMatch(/^igw_events_published_total\{type="chat.status"\} 4$/m);
    const log = await logFor(t, URL);
    expect(log).toContain('"foreign":1');
    expect(log).not.toContain('For the other number');
    expect(log).not.toContain('16505559999');
  });

  it('answers 401 for a tampered byte and publishes nothing', async () => {
    const t = await freshApp();
    const tampered = Buffer.from(BATCH);
    const at = tampered.indexOf('Hello');
    tampered[at] = 'J'.charCodeAt(0);
    const res = await postSigned(t, tampered, BATCH_SIGNATURE);
    expectError(res, 401, 'UNAUTHORIZED');
    expect(t.sink.records).toHaveLength(0);
    expect(t.sink.writes).toBe(0);
  });

  it('answers 401 for a missing header, a signature by another secret, or a malformed header', async () => {
    const t = await freshApp();
    const missing = await request(t.app).post(URL).set('Content-Type', 'application/json').serialize(asIs).send(BATCH);
    expectError(missing, 401, 'UNAUTHORIZED');
    expectError(await postSigned(t, BATCH, signWhatsAppBody(BATCH, 'another-secret')), 401, 'UNAUTHORIZED');
    expectError(await postSigned(t, BATCH, BATCH_SIGNATURE.slice('sha256='.length)), 401, 'UNAUTHORIZED');
    expect(t.sink.records).toHaveLength(0);
  });

  it('answers 404 to a signed POST for an unknown channel', async () => {
    const t = await freshApp();
    expectError(await postSigned(t, BATCH, BATCH_SIGNATURE, '/api/channels/whatsapp/nope'), 404, 'NOT_FOUND');
    expect(t.sink.records).toHaveLength(0);
  });

  it('publishes a POST delivered twice only once; the second still gets 200', async () => {
    // The eight events land in one batch: a linger that outlasts building them on a busy CPU.
    const t = await freshApp({ BATCH_LINGER_MS: '250' });
    const first = await postSigned(t, BATCH, BATCH_SIGNATURE);
    const second = await postSigned(t, BATCH, BATCH_SIGNATURE);
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body).toEqual({ received: 8, published: 0, duplicates: 8, foreign: 1, invalid: 0, ignored: 0 });
    expect(t.sink.records).toHaveLength(8);
    expect(t.sink.writes).toBe(1);
  });

  it('publishes only the new events of a delivery that overlaps an earlier one', async () => {
    const t = await freshApp();
    expect((await postSigned(t, textBody(['wamid.X1', 'wamid.X2']))).status).toBe(200);
    const res = await postSigned(t, textBody(['wamid.X2', 'wamid.X3']));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ published: 1, duplicates: 1 });
    expect(t.sink.events().map((e) => e.data.messageId)).toEqual(['wamid.X1', 'wamid.X2', 'wamid.X3']);
  });

  it('publishes a message repeated within one POST once', async () => {
    const t = await freshApp();
    const res = await postSigned(t, textBody(['wamid.R1', 'wamid.R1']));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ received: 2, published: 1, duplicates: 1 });
    expect(t.sink.records).toHaveLength(1);
  });

  it('scopes the dedupe per channel', async () => {
    const t = await freshApp();
    await t.addChannel('ch_wa_2', channelInput);
    expect((await postSigned(t, BATCH, BATCH_SIGNATURE)).status).toBe(200);
    expect((await postSigned(t, BATCH, BATCH_SIGNATURE, '/api/channels/whatsapp/ch_wa_2')).status).toBe(200);
    expect(t.sink.records).toHaveLength(16);
    expect(t.sink.records.filter((r) => r.key.startsWith('ch_wa_2:'))).toHaveLength(8);
  });

  it('verifies a body with escaped non-ASCII, "@" and "/" as Meta sends it, on the raw bytes', async () => {
    const t = await freshApp();
    const raw = textBody(['wamid.ESC1'], 'PLACEHOLDER').replace(
      'PLACEHOLDER',
      String.raw`Caf\u00e9 \u0040 https:\/\/example.com\/menu`,
    );
    expect(raw).toContain(String.raw`Caf\u00e9`);
    const res = await postSigned(t, raw);
    expect(res.status).toBe(200);
    expect(t.sink.events()[0].data.message.content).toBe('Café @ https://example.com/menu');

    // The same content re-serialised is other bytes: its signature does not fit the raw body.
    const reserialised = JSON.stringify(JSON.parse(raw));
    expect(reserialised).not.toBe(raw);
    expectError(await postSigned(t, raw, signWhatsAppBody(reserialised, APP_SECRET)), 401, 'UNAUTHORIZED');
  });

  it('accepts a delivery with nothing for the inbox (only another webhook field) with 200', async () => {
    const t = await freshApp();
    const body = JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [{ id: '1', changes: [{ field: 'account_update', value: { event: 'VERIFIED_ACCOUNT' } }] }],
    });
    const res = await postSigned(t, body);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: 0, published: 0, duplicates: 0, foreign: 0, invalid: 0, ignored: 0 });
    expect(t.sink.writes).toBe(0);
  });

  it('answers 503 with Retry-After when the sink fails, and the retry after recovery publishes everything', async () => {
    const t = await freshApp();
    t.sink.mode = 'fail';
    const failed = await postSigned(t, BATCH, BATCH_SIGNATURE);
    expectError(failed, 503, 'SERVICE_UNAVAILABLE');
    expect(failed.headers['retry-after']).toMatch(/^\d+$/);
    expect(t.sink.records).toHaveLength(0);

    t.sink.mode = 'ack';
    const retried = await postSigned(t, BATCH, BATCH_SIGNATURE);
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ published: 8, duplicates: 0 });
    expect(t.sink.records).toHaveLength(8);
  });

  it('answers 503 while another request holds an event, publishes the rest, and the retry completes', async () => {
    const t = await freshApp();
    const heldKey = `wa:ws_1:${PHONE_NUMBER_ID}:${CHANNEL_ID}:wamid.H2`;
    expect(await t.deps.idempotency.claim(heldKey, 'holder', 'other', 60_000)).toEqual({ state: 'claimed' });

    const res = await postSigned(t, textBody(['wamid.H1', 'wamid.H2']));
    expectError(res, 503, 'SERVICE_UNAVAILABLE');
    expect(res.body.error.details).toEqual({ reason: 'events_in_flight', missing: 1 });
    expect(res.headers['retry-after']).toMatch(/^\d+$/);
    expect(t.sink.events().map((e) => e.data.messageId)).toEqual(['wamid.H1']);

    // The holder failed and gave its claim back: Meta's retry publishes the missing event only.
    await t.deps.idempotency.release(heldKey, 'holder');
    const retried = await postSigned(t, textBody(['wamid.H1', 'wamid.H2']));
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ published: 1, duplicates: 1 });
    expect(t.sink.events().map((e) => e.data.messageId)).toEqual(['wamid.H1', 'wamid.H2']);
  });

  it('a tap carries the whole interactive object, so the inbox finds the sent id at interactive.button_reply.id', async () => {
    const t = await freshApp();
    const fixture = readFileSync(join(__dirname, '..', 'fixtures', 'whatsapp', 'interactive-button-reply.json'));
    expect((await postSigned(t, fixture)).status).toBe(200);
    const [tap] = t.sink.events();
    expect(tap.type).toBe('chat.tap');
    expect(tap.data.message.contentAttributes.interactive).toEqual(
      JSON.parse(fixture.toString('utf8')).entry[0].changes[0].value.messages[0].interactive,
    );
    expect(tap.data.message.contentAttributes.interactive.button_reply.id).toBe(tap.data.value);
  });

  it('keeps what the sink acknowledged when it refuses one record: 503, and the retry publishes only that one', async () => {
    const t = await freshApp();
    t.sink.refuse = (record) => (record.value.includes('wamid.P2') ? 'unavailable' : undefined);
    const res = await postSigned(t, textBody(['wamid.P1', 'wamid.P2', 'wamid.P3']));
    expectError(res, 503, 'SERVICE_UNAVAILABLE');
    expect(res.body.error.details).toEqual({ reason: 'sink_unavailable', missing: 1 });
    expect(res.headers['retry-after']).toMatch(/^\d+$/);
    expect(t.sink.events().map((e) => e.data.messageId)).toEqual(['wamid.P1', 'wamid.P3']);

    t.sink.refuse = undefined;
    const retried = await postSigned(t, textBody(['wamid.P1', 'wamid.P2', 'wamid.P3']));
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ published: 1, duplicates: 2 });
    expect(t.sink.events().map((e) => e.data.messageId)).toEqual(['wamid.P1', 'wamid.P3', 'wamid.P2']);
  });

  it('skips an item that fails the payload schema and publishes the rest with 200', async () => {
    const t = await freshApp();
    const body = JSON.parse(textBody(['wamid.S1', 'wamid.S2']));
    delete body.entry[0].changes[0].value.messages[0].from;
    const res = await postSigned(t, JSON.stringify(body));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ received: 1, published: 1, invalid: 1 });
    expect(t.sink.events().map((e) => e.data.messageId)).toEqual(['wamid.S2']);
    const metrics = await request(t.admin).get('/metrics');
    expect(metrics.text).toMatch(/^igw_chat_items_skipped_total\{provider="whatsapp",reason="invalid"\} 1$/m);
  });

  it('answers 413 for a body over WHATSAPP_MAX_BODY_BYTES and publishes nothing', async () => {
    const t = await freshApp({ WHATSAPP_MAX_BODY_BYTES: '2048' });
    const big = textBody(['wamid.BIG'], 'x'.repeat(4096));
    const res = await postSigned(t, big);
    expectError(res, 413, 'PAYLOAD_TOO_LARGE');
    expect(t.sink.records).toHaveLength(0);
    // Just under the limit is fine.
    expect((await postSigned(t, textBody(['wamid.SMALL'], 'x'.repeat(1024)))).status).toBe(200);
  });

  it('accepts the 3 MiB default limit for a large signed batch', async () => {
    const t = await freshApp();
    const ids = Array.from({ length: 600 }, (_, i) => `wamid.MANY.${i}`);
    const body = textBody(ids, 'y'.repeat(2000));
    expect(Buffer.byteLength(body)).toBeGreaterThan(MAX_DEFAULT_BODY_BYTES_OF_WEBHOOKS);
    const res = await postSigned(t, body);
    expect(res.status).toBe(200);
    expect(res.body.published).toBe(600);
  });

  it('answers 400 with details for malformed JSON that is correctly signed', async () => {
    const t = await freshApp();
    const res = await postSigned(t, '{"object":"whatsapp_business_account","entry":[');
    expectError(res, 400, 'BAD_REQUEST');
    expect(res.body.error.details).toEqual({ reason: 'invalid_json', problem: expect.any(String) });
    expect(t.sink.records).toHaveLength(0);
  });

  it('answers 400 with the schema issues for a signed body that is not a WhatsApp webhook', async () => {
    const t = await freshApp();
    const res = await postSigned(t, JSON.stringify({ object: 'page', entry: [] }));
    expectError(res, 400, 'BAD_REQUEST');
    expect(res.body.error.details.issues).toEqual(
      expect.arrayContaining([expect.objectContaining({ path: ['object'] })]),
    );
    expect(t.sink.records).toHaveLength(0);
  });

  it('checks the signature before parsing: an unsigned malformed body is 401, not 400', async () => {
    const t = await freshApp();
    const res = await postSigned(t, '{not json', 'sha256=' + '0'.repeat(64));
    expectError(res, 401, 'UNAUTHORIZED');
  });

  it('carries X-RateLimit-* headers and answers 429 with Retry-After past the channel limit', async () => {
    const t = await freshApp({ RATE_LIMIT_DEFAULT: '2/60' });
    const ok = await postSigned(t, textBody(['wamid.RL1']));
    expect(ok.status).toBe(200);
    expect(ok.headers['x-ratelimit-limit']).toBe('2');
    expect(ok.headers['x-ratelimit-remaining']).toBe('1');
    expect(new Date(ok.headers['x-ratelimit-reset']).toISOString()).toBe(ok.headers['x-ratelimit-reset']);
    // A wrong signature is refused before the quota is charged (issue 9, item 2).
    const unauthorized = await postSigned(t, textBody(['wamid.RL2']), 'sha256=' + '0'.repeat(64));
    expectError(unauthorized, 401, 'UNAUTHORIZED');
    expect(unauthorized.headers['x-ratelimit-remaining']).toBeUndefined();
    const last = await postSigned(t, textBody(['wamid.RL3']));
    expect(last.status).toBe(200);
    expect(last.headers['x-ratelimit-remaining']).toBe('0');
    const limited = await postSigned(t, textBody(['wamid.RL4']));
    expectError(limited, 429, 'RATE_LIMITED');
    expect(limited.headers['retry-after']).toMatch(/^\d+$/);
    expect(limited.body.error.details.retryAfter).toEqual(expect.any(String));
    expect(t.sink.events().map((e) => e.data.messageId)).toEqual(['wamid.RL1', 'wamid.RL3']);
  });

  it('never puts the app secret, the verify token or the signature into records or logs', async () => {
    const t = await freshApp();
    await handshake(t, { 'hub.mode': 'subscribe', 'hub.verify_token': VERIFY_TOKEN, 'hub.challenge': '1' });
    expect((await postSigned(t, BATCH, BATCH_SIGNATURE)).status).toBe(200);
    await postSigned(t, BATCH, 'sha256=' + 'f'.repeat(64));
    const log = await logFor(t, URL);
    const records = JSON.stringify(t.sink.records);
    const signatureHex = BATCH_SIGNATURE.slice('sha256='.length);
    for (const secret of [APP_SECRET, VERIFY_TOKEN, signatureHex, 'f'.repeat(64)]) {
      expect(records).not.toContain(secret);
      expect(log).not.toContain(secret);
    }
    expect(records.toLowerCase()).not.toContain('x-hub-signature');
    expect(t.sink.records).toHaveLength(8);
  });
});

/** The webhook route's default MAX_BODY_BYTES: WhatsApp deliveries may be larger. */
const MAX_DEFAULT_BODY_BYTES_OF_WEBHOOKS = 1024 * 1024;
