import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import request from 'supertest';
import twilio from 'twilio';
import type { TwilioChannelInput } from '../../src/registry/schemas';
import { testApp } from '../helpers/app';
import { expectError } from '../helpers/http';

const CHANNEL_ID = 'ch_tw_1';
const ACCOUNT_SID = 'AC0123456789abcdef0123456789abcdef';
const AUTH_TOKEN = 'twilio-auth-token-for-http-tests';
const PATH = `/api/channels/twilio/${CHANNEL_ID}`;
const PUBLIC = 'https://hooks.example.com';

const channelInput: TwilioChannelInput = { provider: 'twilio', workspaceId: 'ws_1', inboxId: 'inbox_1', accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN };

type TestApp = ReturnType<typeof testApp>;

function fixture(name: string): string {
  return readFileSync(join(__dirname, '..', 'fixtures', 'twilio', `${name}.form`), 'utf8');
}

const paramsOf = (form: string) => Object.fromEntries(new URLSearchParams(form));

/** What Twilio sends for this body to PUBLIC + path: signed by the twilio package. */
function post(t: TestApp, form: string, options: { path?: string; signature?: string | null; signedUrl?: string } = {}) {
  const path = options.path ?? PATH;
  const signature =
    options.signature === undefined
      ? twilio.getExpectedTwilioSignature(AUTH_TOKEN, options.signedUrl ?? PUBLIC + path, paramsOf(form))
      : options.signature;
  const req = request(t.app).post(path).set('Content-Type', 'application/x-www-form-urlencoded');
  if (signature !== null) req.set('X-Twilio-Signature', signature);
  return req.send(form);
}

async function freshApp(env: Record<string, string> = {}): Promise<TestApp> {
  const t = testApp({ PUBLIC_BASE_URL: PUBLIC, ...env });
  await t.addChannel(CHANNEL_ID, channelInput);
  return t;
}

function expectTwiml(res: request.Response): void {
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/xml/);
  expect(res.text).toBe('<Response></Response>');
}

async function logFor(t: TestApp, path: string): Promise<string> {
  for (let i = 0; i < 100; i++) {
    if (t.logLines.some((line) => line.includes(`"path":"${path}`))) return t.logLines.join('');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`no access log line for ${path}`);
}

describe('Twilio Messaging webhooks (contract §11)', () => {
  it('publishes a signed inbound SMS as chat.message and answers empty TwiML', async () => {
    const t = await freshApp();
    expectTwiml(await post(t, fixture('sms-inbound')));
    expect(t.sink.records).toHaveLength(1);
    const [record] = t.sink.records;
    expect(record.topic).toBe('chat.inbound');
    expect(record.key).toBe(`${CHANNEL_ID}:14155552671`);
    expect(t.sink.events()[0]).toMatchObject({
      source: `/api/channels/twilio/${CHANNEL_ID}`,
      type: 'chat.message',
      subject: '14155552671',
      data: {
        workspaceId: 'ws_1',
        inboxId: 'inbox_1',
        channelId: CHANNEL_ID,
        provider: 'twilio',
        channelType: 'sms',
        messageId: 'SM1f0e8ae6ade43cb3c0ce4525424e404f',
        contact: { phone: '14155552671', name: null },
        message: { content: 'Hello! Is my order 42 on its way?', contentType: 'text' },
      },
    });
    // Twilio sends no time of its own: the time the gateway received it (contract §4: ISO 8601).
    const event = t.sink.events()[0];
    expect(event.data.timestamp).toBe(event.time);
  });

  it('publishes a WhatsApp quick-reply tap and a list reply as chat.tap', async () => {
    const t = await freshApp();
    expectTwiml(await post(t, fixture('whatsapp-button')));
    expectTwiml(await post(t, fixture('whatsapp-list')));
    expect(t.sink.events().map((e) => [e.type, e.data.value, e.data.message.content, e.data.channelType])).toEqual([
      ['chat.tap', 'slot-1400', 'Tomorrow 14:00', 'whatsapp'],
      ['chat.tap', 'priority_express', 'Priority Mail Express', 'whatsapp'],
    ]);
  });

  it('publishes a status callback once; the same status again is dropped, the next status is new', async () => {
    const t = await freshApp();
    const read = fixture('status-read-whatsapp');
    expectTwiml(await post(t, read));
    expectTwiml(await post(t, read));
    const failed = read.replace('MessageStatus=read', 'MessageStatus=failed');
    expectTwiml(await post(t, failed));
    expect(t.sink.events().map((e) => [e.type, e.data.status])).toEqual([
      ['chat.status', 'read'],
      ['chat.status', 'failed'],
    ]);
  });

  it('does not publish a callback for another AccountSid, but counts and logs it', async () => {
    const t = await freshApp();
    const form = fixture('sms-inbound').replace(ACCOUNT_SID, 'AC99999999999999999999999999999999');
    expectTwiml(await post(t, form));
    expect(t.sink.writes).toBe(0);
    const metrics = await request(t.admin).get('/metrics');
    expect(metrics.text).toMatch(/^igw_chat_items_skipped_total\{provider="twilio",reason="foreign"\} 1$/m);
    const log = await logFor(t, PATH);
    expect(log).toContain('"foreign":1');
    expect(log).not.toContain('Is my order');
  });

  it.each([
    ['a signature by another token', () => twilio.getExpectedTwilioSignature('another-token', PUBLIC + PATH, paramsOf(fixture('sms-inbound')))],
    ['a signature of another URL', () => twilio.getExpectedTwilioSignature(AUTH_TOKEN, `${PUBLIC}/api/channels/twilio/other`, paramsOf(fixture('sms-inbound')))],
  ])('answers 401 signature_invalid for %s and publishes nothing', async (_label, signature) => {
    const t = await freshApp();
    const res = await post(t, fixture('sms-inbound'), { signature: signature() });
    expect(expectError(res, 'UNAUTHORIZED').details).toEqual({ reason: 'signature_invalid' });
    expect(t.sink.records).toHaveLength(0);
  });

  it('answers 401 for a tampered parameter', async () => {
    const t = await freshApp();
    const form = fixture('sms-inbound');
    const signature = twilio.getExpectedTwilioSignature(AUTH_TOKEN, PUBLIC + PATH, paramsOf(form));
    expectError(await post(t, form.replace('order+42', 'order+43'), { signature }), 'UNAUTHORIZED');
    expect(t.sink.records).toHaveLength(0);
  });

  it('answers 401 signature_missing without reading the body', async () => {
    const t = await freshApp();
    const server: Server = t.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest({
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: PATH,
          headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': '1000' },
        });
        req.on('response', (response) => {
          let body = '';
          response.on('data', (chunk) => (body += chunk));
          response.on('end', () => {
            resolve({ status: response.statusCode ?? 0, body });
            req.destroy();
          });
        });
        req.on('error', reject);
        req.write('AccountSid='); // the other 989 bytes never come
      });
      expect(res.status).toBe(401);
      expect(JSON.parse(res.body).error.details).toEqual({ reason: 'signature_missing' });
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('spends no quota on forged callbacks', async () => {
    const t = await freshApp({ RATE_LIMIT_DEFAULT: '1/60' });
    for (let i = 0; i < 3; i++) expectError(await post(t, fixture('sms-inbound'), { signature: 'forged' }), 'UNAUTHORIZED');
    const ok = await post(t, fixture('sms-inbound'));
    expectTwiml(ok);
    expect(ok.headers['x-ratelimit-remaining']).toBe('0');
    expectError(await post(t, fixture('whatsapp-inbound')), 'RATE_LIMITED');
  });

  it('verifies against PUBLIC_BASE_URL + path + query, not the address the gateway was reached at', async () => {
    const t = await freshApp();
    const path = `${PATH}?src=console&note=it%27s`;
    expectTwiml(await post(t, fixture('sms-inbound'), { path }));
    // Signed for the internal address (what the gateway itself saw): refused.
    const internal = `http://127.0.0.1${path}`;
    expectError(await post(t, fixture('whatsapp-inbound'), { path, signedUrl: internal }), 'UNAUTHORIZED');
    // The query is part of what is signed.
    expectError(await post(t, fixture('whatsapp-inbound'), { path: `${PATH}?src=other`, signedUrl: PUBLIC + path }), 'UNAUTHORIZED');
  });

  it('accepts the default port written out or left out', async () => {
    const t = await freshApp();
    expectTwiml(await post(t, fixture('sms-inbound'), { signedUrl: `https://hooks.example.com:443${PATH}` }));
    expect(t.sink.records).toHaveLength(1);
  });

  it('without PUBLIC_BASE_URL, uses the request\'s own protocol and Host', async () => {
    const t = testApp();
    await t.addChannel(CHANNEL_ID, channelInput);
    const form = fixture('sms-inbound');
    const signature = twilio.getExpectedTwilioSignature(AUTH_TOKEN, `http://gw.example.com${PATH}`, paramsOf(form));
    const res = await request(t.app)
      .post(PATH)
      .set('Host', 'gw.example.com')
      .set('Content-Type', 'application/x-www-form-urlencoded')
      .set('X-Twilio-Signature', signature)
      .send(form);
    expectTwiml(res);
  });

  it('accepts the JSON variant signed through bodySHA256', async () => {
    const t = await freshApp();
    const body = JSON.stringify(paramsOf(fixture('whatsapp-inbound')));
    const path = `${PATH}?bodySHA256=${createHash('sha256').update(body).digest('hex')}`;
    const signature = twilio.getExpectedTwilioSignature(AUTH_TOKEN, PUBLIC + path, {});
    const send = (payload: string) =>
      request(t.app).post(path).set('Content-Type', 'application/json').set('X-Twilio-Signature', signature).send(payload);
    expectTwiml(await send(body));
    expect(t.sink.events()[0].data).toMatchObject({ channelType: 'whatsapp', contact: { name: 'Zoë Martin' } });
    // The body no longer fits its hash.
    expectError(await send(body.replace('Olá', 'Ola')), 'UNAUTHORIZED');
    expect(t.sink.records).toHaveLength(1);
  });

  // A signature over the URL alone does not cover such a body (contract §10).
  it('answers 401 signature_invalid for a body that is neither a form nor the bodySHA256 variant', async () => {
    const t = await freshApp();
    const signature = twilio.getExpectedTwilioSignature(AUTH_TOKEN, PUBLIC + PATH, {});
    const res = await request(t.app).post(PATH).set('Content-Type', 'text/plain').set('X-Twilio-Signature', signature).send('hello');
    expect(expectError(res, 'UNAUTHORIZED').details).toEqual({ reason: 'signature_invalid' });
    expect(t.sink.records).toHaveLength(0);
  });

  // Malformed is "no usable signature", as on a trigger with provider twilio (contract §10).
  it('answers 401 signature_missing for garbage and publishes nothing', async () => {
    const t = await freshApp();
    const res = await post(t, fixture('sms-inbound'), { signature: 'not-a-signature' });
    expect(expectError(res, 'UNAUTHORIZED').details).toEqual({ reason: 'signature_missing' });
    expect(t.sink.records).toHaveLength(0);
  });

  it('answers 400 for a body that is not UTF-8 and 413 for more parameters than MAX_FIELDS', async () => {
    const t = await freshApp({ MAX_FIELDS: '5' });
    const notUtf8 = Buffer.concat([Buffer.from('Body='), Buffer.from([0xff, 0xfe])]);
    // Signed as the gateway reads the bytes (U+FFFD for each bad one): the signature is checked first.
    const bad = await request(t.app)
      .post(PATH)
      .set('Content-Type', 'application/x-www-form-urlencoded')
      .set('X-Twilio-Signature', twilio.getExpectedTwilioSignature(AUTH_TOKEN, PUBLIC + PATH, { Body: '\ufffd\ufffd' }))
      .serialize(((body: Buffer) => body) as unknown as (body: unknown) => string)
      .send(notUtf8);
    expectError(bad, 'BAD_REQUEST');
    expectError(await post(t, fixture('sms-inbound')), 'PAYLOAD_TOO_LARGE');
    expect(t.sink.records).toHaveLength(0);
  });

  it('answers 404 for an unknown channel or one of another provider, and 405 for GET', async () => {
    const t = await freshApp();
    await t.addChannel('ch_tg', { provider: 'telegram', workspaceId: 'ws_1', inboxId: 'i', secretToken: 'telegram-secret-0123456789' });
    expectError(await post(t, fixture('sms-inbound'), { path: '/api/channels/twilio/nope' }), 'NOT_FOUND');
    expectError(await post(t, fixture('sms-inbound'), { path: '/api/channels/twilio/ch_tg' }), 'NOT_FOUND');
    const get = await request(t.app).get(PATH);
    expectError(get, 'METHOD_NOT_ALLOWED');
    expect(get.headers.allow).toBe('POST');
  });

  it('answers 503 with Retry-After when the sink fails; Twilio\'s retry then publishes', async () => {
    const t = await freshApp();
    t.sink.mode = 'fail';
    const failed = await post(t, fixture('sms-inbound'));
    expectError(failed, 'SERVICE_UNAVAILABLE');
    expect(failed.headers['retry-after']).toMatch(/^\d+$/);
    t.sink.mode = 'ack';
    expectTwiml(await post(t, fixture('sms-inbound')));
    expect(t.sink.records).toHaveLength(1);
  });

  it('never puts the auth token or the signature into records or logs', async () => {
    const t = await freshApp();
    const form = fixture('sms-inbound');
    const signature = twilio.getExpectedTwilioSignature(AUTH_TOKEN, PUBLIC + PATH, paramsOf(form));
    expectTwiml(await post(t, form, { signature }));
    await post(t, form, { signature: 'Zm9yZ2VkLXNpZ25hdHVyZQ==' });
    const log = await logFor(t, PATH);
    const records = JSON.stringify(t.sink.records);
    for (const secret of [AUTH_TOKEN, signature, 'Zm9yZ2VkLXNpZ25hdHVyZQ==']) {
      expect(records).not.toContain(secret);
      expect(log).not.toContain(secret);
    }
    expect(records.toLowerCase()).not.toContain('x-twilio-signature');
    expect(log).toContain('"route":"twilio"');
  });
});
