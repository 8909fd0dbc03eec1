import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import twilio from 'twilio';
import { testApp } from '../helpers/app';
import { hookUrl, triggerInput } from '../helpers/http';
import { signWhatsAppBody } from '../helpers/meta-signature';

/**
 * Contract §10 "One sender, one behaviour", ids: the same signed delivery posted to a provider
 * trigger and to a channel of that provider is named by the same id on both routes, read from the
 * verified material only (contract §5): an unsigned header sent with a replay never renames it.
 */

const PUBLIC = 'https://hooks.example.com';
const TRIGGER = hookUrl('sender-ids');

function fixture(dir: string, name: string): string {
  return readFileSync(join(__dirname, '..', 'fixtures', dir, name), 'utf8');
}

type App = ReturnType<typeof testApp>;

function newEvents(t: App, before: number): Array<Record<string, any>> {
  return t.sink.events().slice(before);
}

/** Posts to both routes; returns the trigger event's delivery id and the chat event's data. */
async function postToBoth(t: App, send: (path: string) => request.Test, channelPath: string) {
  const before = t.sink.records.length;
  const onTrigger = await send(TRIGGER);
  expect(onTrigger.status).toBe(200);
  const onChannel = await send(channelPath);
  expect(onChannel.status).toBe(200);
  const events = newEvents(t, before);
  expect(events).toHaveLength(2);
  const triggerEvent = events.find((e) => e.data.provider !== undefined);
  const chatEvent = events.find((e) => String(e.type).startsWith('chat.'));
  return { deliveryId: triggerEvent?.data.provider.deliveryId as string, chat: chatEvent?.data as Record<string, any> };
}

/** A replay on both routes: the trigger answers it as a replay, and neither publishes anything. */
async function expectDuplicateOnBoth(t: App, send: (path: string) => request.Test, channelPath: string) {
  const before = t.sink.records.length;
  const onTrigger = await send(TRIGGER);
  expect(onTrigger.status).toBe(200);
  expect(onTrigger.headers['idempotent-replayed']).toBe('true');
  const onChannel = await send(channelPath);
  expect(onChannel.status).toBe(200);
  expect(t.sink.records).toHaveLength(before);
}

describe('Twilio: the same delivery id on the trigger and on the channel', () => {
  const AUTH_TOKEN = 'twilio-auth-token-sender-ids';
  const ACCOUNT_SID = 'AC0123456789abcdef0123456789abcdef';
  const CHANNEL = '/api/channels/twilio/ch_twilio_ids';
  const t = testApp({ PUBLIC_BASE_URL: PUBLIC });
  beforeAll(async () => {
    await t.addTrigger('sender-ids', triggerInput({ provider: { name: 'twilio', secrets: [AUTH_TOKEN] } }));
    await t.addChannel('ch_twilio_ids', { provider: 'twilio', workspaceId: 'ws-1', inboxId: 'in-1', accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN });
  });

  const sender = (form: string, token: string) => (path: string) =>
    request(t.app)
      .post(path)
      .set('Content-Type', 'application/x-www-form-urlencoded')
      .set('X-Twilio-Signature', twilio.getExpectedTwilioSignature(AUTH_TOKEN, `${PUBLIC}${path}`, Object.fromEntries(new URLSearchParams(form))))
      // Twilio's idempotency token is not covered by the signature: it must not name the delivery.
      .set('I-Twilio-Idempotency-Token', token)
      .send(form);

  it('names an inbound message by its MessageSid on both routes; a replay with another token is a duplicate on both', async () => {
    const form = fixture('twilio', 'sms-inbound.form');
    const { deliveryId, chat } = await postToBoth(t, sender(form, 'token-first-attempt'), CHANNEL);
    expect(deliveryId).toBe('SM1f0e8ae6ade43cb3c0ce4525424e404f');
    expect(chat.messageId).toBe(deliveryId);
    await expectDuplicateOnBoth(t, sender(form, 'token-of-a-replay'), CHANNEL);
  });

  it('names a status callback by MessageSid and MessageStatus on both routes; a replay with another token is a duplicate on both', async () => {
    const form = fixture('twilio', 'status-delivered.form');
    const { deliveryId, chat } = await postToBoth(t, sender(form, 'status-token-first'), CHANNEL);
    expect(deliveryId).toBe('SM9b4c7d8e0f1a2b3c4d5e6f708192a3b4:delivered');
    expect(`${chat.messageId}:${chat.status}`).toBe(deliveryId);
    await expectDuplicateOnBoth(t, sender(form, 'status-token-replay'), CHANNEL);
  });
});

describe('Meta: the same delivery id on the trigger and on the WhatsApp channel', () => {
  const APP_SECRET = 'meta-app-secret-sender-ids';
  const CHANNEL = '/api/channels/whatsapp/ch_wa_ids';
  const t = testApp();
  beforeAll(async () => {
    await t.addTrigger('sender-ids', triggerInput({ provider: { name: 'meta', secrets: [APP_SECRET] } }));
    await t.addChannel('ch_wa_ids', { provider: 'whatsapp', workspaceId: 'ws-1', inboxId: 'in-1', phoneNumberId: '106540352242922', verifyToken: 'verify-ids', appSecret: APP_SECRET });
  });

  const sender = (raw: string, idempotencyKey: string) => (path: string) =>
    request(t.app)
      .post(path)
      .set('Content-Type', 'application/json')
      .set('X-Hub-Signature-256', signWhatsAppBody(raw, APP_SECRET))
      .set('Idempotency-Key', idempotencyKey)
      .send(raw);

  it('names a one-message delivery by the message id on both routes; a replay is a duplicate on both', async () => {
    const raw = fixture('whatsapp', 'text.json');
    const { deliveryId, chat } = await postToBoth(t, sender(raw, 'key-first'), CHANNEL);
    expect(deliveryId).toBe(JSON.parse(raw).entry[0].changes[0].value.messages[0].id);
    expect(chat.messageId).toBe(deliveryId);
    await expectDuplicateOnBoth(t, sender(raw, 'key-of-a-replay'), CHANNEL);
  });

  it('names a one-status delivery by the status id and status on both routes; a replay is a duplicate on both', async () => {
    const raw = fixture('whatsapp', 'status-read.json');
    const { deliveryId, chat } = await postToBoth(t, sender(raw, 'status-key-first'), CHANNEL);
    expect(deliveryId).toBe('wamid.HBgLMTY1MDM4Nzk0MzkVAgARGBI3NTRDQjQ2MjgzRjVBNjhFNDMA:read');
    expect(`${chat.messageId}:${chat.status}`).toBe(deliveryId);
    await expectDuplicateOnBoth(t, sender(raw, 'status-key-replay'), CHANNEL);
  });
});

describe('Telegram: the same delivery id on the trigger and on the channel', () => {
  const SECRET = 'telegram-secret-sender-ids';
  const CHANNEL = '/api/channels/telegram/ch_tg_ids';
  const t = testApp();
  beforeAll(async () => {
    await t.addTrigger('sender-ids', triggerInput({ provider: { name: 'telegram', secrets: [SECRET] } }));
    await t.addChannel('ch_tg_ids', { provider: 'telegram', workspaceId: 'ws-1', inboxId: 'in-1', secretToken: SECRET });
  });

  const sender = (raw: string, idempotencyKey: string) => (path: string) =>
    request(t.app)
      .post(path)
      .set('Content-Type', 'application/json')
      .set('X-Telegram-Bot-Api-Secret-Token', SECRET)
      .set('Idempotency-Key', idempotencyKey)
      .send(raw);

  it('names an update by its update_id on both routes: the same update_id again is a duplicate on both, even with other bytes', async () => {
    const raw = fixture('telegram', 'text.json');
    const { deliveryId, chat } = await postToBoth(t, sender(raw, 'tg-key-first'), CHANNEL);
    expect(deliveryId).toBe('10000');
    expect(chat.messageId).toBe('1365');
    // Telegram sends an update again with the same update_id; the id names it, not the bytes.
    const redelivered = JSON.stringify({ ...JSON.parse(raw), message: { ...JSON.parse(raw).message, text: '/start again' } });
    await expectDuplicateOnBoth(t, sender(redelivered, 'tg-key-replay'), CHANNEL);
  });
});
