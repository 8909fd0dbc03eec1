import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import twilio from 'twilio';
import { testApp } from '../helpers/app';
import { expectError, hookUrl, triggerInput } from '../helpers/http';
import { signWhatsAppBody } from '../helpers/meta-signature';

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

  it.each(paths)('echoes a numeric challenge on the %s route', async (_route, path) => {
    const res = await request(t.app).get(path).query({ 'hub.mode': 'subscribe', 'hub.verify_token': VERIFY_TOKEN, 'hub.challenge': '1158201444' });
    expect(res.status).toBe(200);
    expect(res.text).toBe('1158201444');
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
