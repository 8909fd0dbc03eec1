import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import twilio from 'twilio';
import { ADMIN_TOKEN, testApp } from '../helpers/app';
import { expectError, hookUrl, triggerInput } from '../helpers/http';
import { signWhatsAppBody } from '../helpers/meta-signature';
import { waitUntil } from '../helpers/wait';

/** Contract §10 "One sender, one behaviour": a delivery valid on the trigger route is valid on the channel route, and the reverse. */

const PUBLIC = 'https://hooks.example.com';
const AUTH_TOKEN = 'twilio-auth-token-one-sender';
const ACCOUNT_SID = 'AC0123456789abcdef0123456789abcdef';
const APP_SECRET = 'meta-app-secret-one-sender';
const VERIFY_TOKEN = 'verify-me-one-sender';

const routes = { trigger: hookUrl('sender'), channel: '/api/channels/PROVIDER/ch_sender' };

function fixture(dir: string, name: string): string {
  return readFileSync(join(__dirname, '..', 'fixtures', dir, name), 'utf8');
}

type App = ReturnType<typeof testApp>;

/** The delivery log entry (contract §13) of one request, once it is written. */
async function logEntry(t: App, route: 'trigger' | 'channel', id: string, requestId: string): Promise<Record<string, any>> {
  let found: Record<string, any> | undefined;
  await waitUntil(async () => {
    const page = await request(t.admin).get(`/admin/${route}s/${id}/deliveries?limit=500`).set('Authorization', `Bearer ${ADMIN_TOKEN}`);
    found = page.body.data?.find((entry: { requestId: string }) => entry.requestId === requestId);
    return found !== undefined;
  }, `the log entry of ${requestId}`);
  return found!;
}

describe('Twilio on a trigger and on a channel', () => {
  const t = testApp({ PUBLIC_BASE_URL: PUBLIC });
  const form = fixture('twilio', 'sms-inbound.form').replace(/AccountSid=[^&]*/, `AccountSid=${ACCOUNT_SID}`);
  beforeAll(async () => {
    await t.addTrigger('sender', triggerInput({ provider: { name: 'twilio', secrets: [AUTH_TOKEN] } }));
    await t.addChannel('ch_sender', { provider: 'twilio', workspaceId: 'ws-1', inboxId: 'in-1', accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN });
  });

  // Twilio signed `?name=O%27Brien` (its legacy query encoding); the request line carries `O'Brien`.
  it.each([
    ['trigger', routes.trigger],
    ['channel', routes.channel.replace('PROVIDER', 'twilio')],
  ])('accepts a callback signed over the legacy-encoded URL on the %s route', async (_route, path) => {
    const signature = twilio.getExpectedTwilioSignature(AUTH_TOKEN, `${PUBLIC}${path}?name=O%27Brien`, Object.fromEntries(new URLSearchParams(form)));
    const before = t.sink.records.length;
    const res = await request(t.app)
      .post(`${path}?name=O'Brien`)
      .set('Content-Type', 'application/x-www-form-urlencoded')
      .set('X-Twilio-Signature', signature)
      .send(form);
    expect(res.status).toBe(200);
    expect(res.text).toBe('<Response></Response>');
    expect(t.sink.records).toHaveLength(before + 1);
  });

  // A signature over the URL alone covers no body but a form's (or one under bodySHA256).
  it.each([
    ['trigger', routes.trigger, 'application/json', '{"Body":"forged"}'],
    ['channel', routes.channel.replace('PROVIDER', 'twilio'), 'application/json', '{"Body":"forged"}'],
    ['trigger', routes.trigger, 'text/plain', 'forged'],
    ['channel', routes.channel.replace('PROVIDER', 'twilio'), 'text/plain', 'forged'],
  ])('refuses on the %s route a %s body signed over the URL alone (401 signature_invalid)', async (_route, path, type, body) => {
    const signature = twilio.getExpectedTwilioSignature(AUTH_TOKEN, `${PUBLIC}${path}`, {});
    const before = t.sink.records.length;
    const res = await request(t.app).post(path).set('Content-Type', type).set('X-Twilio-Signature', signature).send(body);
    expect(expectError(res, 'UNAUTHORIZED').details).toEqual({ reason: 'signature_invalid' });
    expect(t.sink.records).toHaveLength(before);
  });
});

describe('Twilio: one content-type rule and one kind on both routes', () => {
  const t = testApp({ PUBLIC_BASE_URL: PUBLIC });
  const channelPath = routes.channel.replace('PROVIDER', 'twilio');
  const paths: Array<['trigger' | 'channel', string]> = [
    ['trigger', routes.trigger],
    ['channel', channelPath],
  ];
  const withAccount = (name: string) => fixture('twilio', name).replace(/AccountSid=[^&]*/, `AccountSid=${ACCOUNT_SID}`);
  const signForm = (path: string, form: string) => twilio.getExpectedTwilioSignature(AUTH_TOKEN, `${PUBLIC}${path}`, Object.fromEntries(new URLSearchParams(form)));
  beforeAll(async () => {
    await t.addTrigger('sender', triggerInput({ provider: { name: 'twilio', secrets: [AUTH_TOKEN] } }));
    await t.addChannel('ch_sender', { provider: 'twilio', workspaceId: 'ws-1', inboxId: 'in-1', accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN });
  });

  // Twilio always sends application/x-www-form-urlencoded (contract §2.4, §11): a body without a type is
  // not Twilio's, even under a signature that holds over its parameters.
  it('answers the same 415 to a correctly signed form without a Content-Type on both routes', async () => {
    const form = withAccount('sms-inbound.form');
    const before = t.sink.records.length;
    const answers = [];
    for (const [, path] of paths) {
      const signature = signForm(path, form);
      expect(twilio.validateRequest(AUTH_TOKEN, signature, `${PUBLIC}${path}`, Object.fromEntries(new URLSearchParams(form)))).toBe(true);
      const res = await request(t.app).post(path).serialize((x: string) => x).send(form).unset('Content-Type').set('X-Twilio-Signature', signature);
      answers.push(expectError(res, 'UNSUPPORTED_MEDIA_TYPE'));
    }
    expect(answers[0].details).toEqual({ reason: 'unsupported_media_type', contentType: null, accepted: ['application/x-www-form-urlencoded'] });
    expect(answers[1]).toEqual(answers[0]);
    expect(t.sink.records).toHaveLength(before);
  });

  it.each(paths)('answers 415 on the %s route to a body signed through bodySHA256 that is not sent as JSON', async (_route, path) => {
    const body = JSON.stringify(Object.fromEntries(new URLSearchParams(withAccount('sms-inbound.form'))));
    const signed = `${path}?bodySHA256=${createHash('sha256').update(body).digest('hex')}`;
    const signature = twilio.getExpectedTwilioSignature(AUTH_TOKEN, `${PUBLIC}${signed}`, {});
    expect(twilio.validateRequestWithBody(AUTH_TOKEN, signature, `${PUBLIC}${signed}`, body)).toBe(true);
    const before = t.sink.records.length;
    const res = await request(t.app).post(signed).set('Content-Type', 'text/plain').set('X-Twilio-Signature', signature).send(body);
    expect(expectError(res, 'UNSUPPORTED_MEDIA_TYPE').details).toEqual({ reason: 'unsupported_media_type', contentType: 'text/plain', accepted: ['application/json'] });
    expect(t.sink.records).toHaveLength(before);
  });

  // The kind is the catalogue's (kinds/twilio.json): only `received` is an inbound message's status.
  it.each([
    ['an inbound message', withAccount('sms-inbound.form'), 'message.inbound', 'chat.message'],
    ['a status callback', withAccount('status-delivered.form'), 'message.status.delivered', 'chat.status'],
    ['a receiving callback', withAccount('sms-inbound.form').replace('SmsStatus=received', 'SmsStatus=receiving&MessageStatus=receiving'), 'message.status.receiving', 'chat.status'],
  ])('derives the same kind for %s on both routes', async (_name, form, kind, chatType) => {
    const before = t.sink.records.length;
    const kinds: string[] = [];
    for (const [route, path] of paths) {
      const res = await request(t.app).post(path).set('Content-Type', 'application/x-www-form-urlencoded').set('X-Twilio-Signature', signForm(path, form)).send(form);
      expect(res.status).toBe(200);
      kinds.push((await logEntry(t, route, route === 'trigger' ? 'sender' : 'ch_sender', res.headers['x-request-id'])).kind);
    }
    expect(kinds).toEqual([kind, kind]);
    const events = t.sink.events().slice(before);
    expect(events.map((event) => event.data.provider?.kind ?? event.type)).toEqual([kind, chatType]);
  });

  // A repeated parameter is read by its first value on both routes (the trigger's form parser collects it into an array).
  it('names a callback with a repeated MessageStatus by its first value on both routes', async () => {
    const form = `${withAccount('status-delivered.form').replace(/SM[0-9a-f]{32}/g, 'SM00000000000000000000000000000001')}&MessageStatus=read`;
    const params: Record<string, string[]> = {};
    for (const [name, value] of new URLSearchParams(form)) (params[name] ??= []).push(value);
    const before = t.sink.records.length;
    for (const [, path] of paths) {
      const signature = twilio.getExpectedTwilioSignature(AUTH_TOKEN, `${PUBLIC}${path}`, params);
      const res = await request(t.app).post(path).set('Content-Type', 'application/x-www-form-urlencoded').set('X-Twilio-Signature', signature).send(form);
      expect(res.status).toBe(200);
    }
    const [onTrigger, onChannel] = t.sink.events().slice(before);
    expect(onTrigger.data.provider).toMatchObject({ kind: 'message.status.delivered', deliveryId: 'SM00000000000000000000000000000001:delivered' });
    expect(onChannel.data.status).toBe('delivered');
  });
});

describe('Meta on a trigger and on a WhatsApp channel', () => {
  const t = testApp();
  beforeAll(async () => {
    await t.addTrigger('sender', triggerInput({ provider: { name: 'meta', secrets: [APP_SECRET], options: { verifyToken: VERIFY_TOKEN } } }));
    await t.addChannel('ch_sender', { provider: 'whatsapp', workspaceId: 'ws-1', inboxId: 'in-1', phoneNumberId: '106540352242922', verifyToken: VERIFY_TOKEN, appSecret: APP_SECRET });
  });
  const paths: Array<[string, string]> = [
    ['trigger', routes.trigger],
    ['channel', routes.channel.replace('PROVIDER', 'whatsapp')],
  ];

  it.each(paths)('refuses to echo a challenge that is markup on the %s route (400), with the right token', async (_route, path) => {
    const res = await request(t.app).get(path).query({ 'hub.mode': 'subscribe', 'hub.verify_token': VERIFY_TOKEN, 'hub.challenge': '<svg onload=alert(1)>' });
    expectError(res, 'BAD_REQUEST');
    expect(res.text).not.toContain('<svg');
  });

  // A GET with hub.mode is the handshake (contract §3): 400 when it cannot be answered, not 405.
  it.each(paths)('refuses 400 invalid_handshake a subscribe without hub.challenge on the %s route', async (_route, path) => {
    const res = await request(t.app).get(path).query({ 'hub.mode': 'subscribe', 'hub.verify_token': VERIFY_TOKEN });
    expect(expectError(res, 'BAD_REQUEST').details).toEqual({ reason: 'invalid_handshake' });
  });

  it.each(paths)('refuses 400 invalid_handshake a GET with hub.* parameters but no hub.mode on the %s route', async (_route, path) => {
    const res = await request(t.app).get(path).query({ 'hub.verify_token': VERIFY_TOKEN, 'hub.challenge': '1158201444' });
    expect(expectError(res, 'BAD_REQUEST').details).toEqual({ reason: 'invalid_handshake' });
  });

  it.each(paths)('echoes a numeric challenge on the %s route', async (_route, path) => {
    const res = await request(t.app).get(path).query({ 'hub.mode': 'subscribe', 'hub.verify_token': VERIFY_TOKEN, 'hub.challenge': '1158201444' });
    expect(res.status).toBe(200);
    expect(res.text).toBe('1158201444');
  });

  // Meta posts JSON only: a signed body of another type (or none) is the same 415 on both routes.
  it.each([
    ['trigger', routes.trigger, 'text/plain'],
    ['channel', routes.channel.replace('PROVIDER', 'whatsapp'), 'text/plain'],
    ['trigger', routes.trigger, undefined],
    ['channel', routes.channel.replace('PROVIDER', 'whatsapp'), undefined],
  ])('answers 415 on the %s route to a signed WhatsApp body sent as %s', async (_route, path, type) => {
    const raw = fixture('whatsapp', 'text.json');
    const before = t.sink.records.length;
    const post = request(t.app).post(path).serialize((x: string) => x).set('X-Hub-Signature-256', signWhatsAppBody(raw, APP_SECRET)).send(raw);
    const res = await (type === undefined ? post.unset('Content-Type') : post.set('Content-Type', type));
    expect(expectError(res, 'UNSUPPORTED_MEDIA_TYPE').details).toEqual({ reason: 'unsupported_media_type', contentType: type ?? null, accepted: ['application/json'] });
    expect(t.sink.records).toHaveLength(before);
  });

  // Read as UTF-16 on a trigger, as UTF-8 on the channel: neither, since Meta writes (and signs) UTF-8.
  it.each(paths)('answers 415 on the %s route to a signed WhatsApp body in another charset than UTF-8', async (_route, path) => {
    const raw = Buffer.from(fixture('whatsapp', 'text.json'), 'utf16le');
    const before = t.sink.records.length;
    const res = await request(t.app)
      .post(path)
      .set('Content-Type', 'application/json; charset=utf-16le')
      .set('X-Hub-Signature-256', signWhatsAppBody(raw, APP_SECRET))
      // Sent as the bytes they are, not JSON-serialised by supertest.
      .serialize(((body: Buffer) => body) as unknown as (body: unknown) => string)
      .send(raw);
    expect(expectError(res, 'UNSUPPORTED_MEDIA_TYPE').details).toEqual({ reason: 'unsupported_charset', charset: 'utf-16le' });
    expect(t.sink.records).toHaveLength(before);
  });

  it('checks the WhatsApp signature once per request', async () => {
    const raw = fixture('whatsapp', 'text.json');
    // The module object itself (the gateway's compiled imports read its properties at each call).
    const createHmac = jest.spyOn(require('node:crypto') as typeof import('node:crypto'), 'createHmac');
    try {
      const res = await request(t.app)
        .post(routes.channel.replace('PROVIDER', 'whatsapp'))
        .set('Content-Type', 'application/json')
        .set('X-Hub-Signature-256', signWhatsAppBody(raw, APP_SECRET))
        .send(raw);
      expect(res.status).toBe(200);
      // One HMAC for the test's own signature above, one for the gateway's check.
      expect(createHmac.mock.calls.filter(([, key]) => key === APP_SECRET)).toHaveLength(2);
    } finally {
      createHmac.mockRestore();
    }
  });
});

describe('Meta: one body limit on both routes', () => {
  // A trigger's limit is 1,024 bytes here; the WhatsApp channel's stays at WHATSAPP_MAX_BODY_BYTES.
  const t = testApp({ MAX_BODY_BYTES: '1024' });
  beforeAll(async () => {
    await t.addTrigger('sender', triggerInput({ provider: { name: 'meta', secrets: [APP_SECRET], options: { verifyToken: VERIFY_TOKEN } } }));
    await t.addChannel('ch_sender', { provider: 'whatsapp', workspaceId: 'ws-1', inboxId: 'in-1', phoneNumberId: '106540352242922', verifyToken: VERIFY_TOKEN, appSecret: APP_SECRET });
  });

  it.each([
    ['trigger', routes.trigger],
    ['channel', routes.channel.replace('PROVIDER', 'whatsapp')],
  ])('accepts on the %s route a signed WhatsApp batch larger than MAX_BODY_BYTES', async (_route, path) => {
    const raw = fixture('whatsapp', 'batch.json');
    expect(Buffer.byteLength(raw)).toBeGreaterThan(1024);
    const res = await request(t.app).post(path).set('Content-Type', 'application/json').set('X-Hub-Signature-256', signWhatsAppBody(raw, APP_SECRET)).send(raw);
    expect(res.status).toBe(200);
  });

  it('refuses 413 on both routes a signed batch over a lowered WHATSAPP_MAX_BODY_BYTES', async () => {
    const small = testApp({ WHATSAPP_MAX_BODY_BYTES: '2048' });
    await small.addTrigger('sender', triggerInput({ provider: { name: 'meta', secrets: [APP_SECRET], options: { verifyToken: VERIFY_TOKEN } } }));
    await small.addChannel('ch_sender', { provider: 'whatsapp', workspaceId: 'ws-1', inboxId: 'in-1', phoneNumberId: '106540352242922', verifyToken: VERIFY_TOKEN, appSecret: APP_SECRET });
    const raw = fixture('whatsapp', 'batch.json');
    for (const path of [routes.trigger, routes.channel.replace('PROVIDER', 'whatsapp')]) {
      const res = await request(small.app).post(path).set('Content-Type', 'application/json').set('X-Hub-Signature-256', signWhatsAppBody(raw, APP_SECRET)).send(raw);
      expect(expectError(res, 'PAYLOAD_TOO_LARGE').details).toMatchObject({ reason: 'body_too_large', limit: 2048 });
    }
    expect(small.sink.records).toHaveLength(0);
  });
});

describe('Telegram on a trigger and on a channel', () => {
  const SECRET_TOKEN = 'telegram-secret-one-sender';
  const t = testApp();
  const paths: Array<[string, string]> = [
    ['trigger', routes.trigger],
    ['channel', routes.channel.replace('PROVIDER', 'telegram')],
  ];
  beforeAll(async () => {
    await t.addTrigger('sender', triggerInput({ provider: { name: 'telegram', secrets: [SECRET_TOKEN] } }));
    await t.addChannel('ch_sender', { provider: 'telegram', workspaceId: 'ws-1', inboxId: 'in-1', secretToken: SECRET_TOKEN });
  });
  /** An update as the Bot API posts it, with the secret token. */
  const postUpdate = (path: string, contentType: string, body: string) =>
    request(t.app).post(path).set('X-Telegram-Bot-Api-Secret-Token', SECRET_TOKEN).set('Content-Type', contentType).send(body);

  // The Bot API posts JSON only: the same 415 on both routes for anything else.
  it.each(paths)('answers 415 on the %s route to an update sent as a form', async (_route, path) => {
    const before = t.sink.records.length;
    const res = await postUpdate(path, 'application/x-www-form-urlencoded', 'update_id=1&message=hi');
    expect(expectError(res, 'UNSUPPORTED_MEDIA_TYPE').details).toEqual({
      reason: 'unsupported_media_type',
      contentType: 'application/x-www-form-urlencoded',
      accepted: ['application/json'],
    });
    expect(t.sink.records).toHaveLength(before);
  });

  // A link entity is `{ type: "url", offset, length }`: no file value (it has no `data`), valid on both routes.
  it.each(paths)('publishes on the %s route an update whose message holds a link entity', async (_route, path) => {
    const before = t.sink.records.length;
    const res = await postUpdate(path, 'application/json', fixture('telegram', 'text-with-link.json'));
    expect(res.status).toBe(200);
    expect(t.sink.records).toHaveLength(before + 1);
  });
});
