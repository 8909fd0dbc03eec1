/**
 * Issue 36, public-key families (contract §10.1 B, C, H): Ed25519 (Discord, Telnyx, Standard
 * Webhooks `v1a`) and ECDSA P-256 (SendGrid), keys pinned in `provider.publicKeys`. Private keys
 * are never published, so each test makes its own pair. Discord is accepted first by
 * discord-interactions' verifyKey, Telnyx by the telnyx SDK's webhooks.unwrap, SendGrid by
 * @sendgrid/eventwebhook (and SendGrid's own published vector is delivered as is). Standard
 * Webhooks `v1a` has no verifier in `standardwebhooks`, so the spec's check is made with node:crypto.
 */
import { createHash, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { EventWebhook } from '@sendgrid/eventwebhook';
import { verifyKey } from 'discord-interactions';
import Telnyx from 'telnyx';
import { testApp } from '../../helpers/app';
import { expectError } from '../../helpers/http';
import { deliver, describePreset, eventOf, examplePayload, nowSeconds, registerTrigger, type Delivery } from '../../helpers/presets';
import vector from '../../fixtures/providers/sendgrid/published-vector.json';

/** The 32 raw bytes of an Ed25519 public key. */
const rawEd25519 = (key: KeyObject) => Buffer.from(key.export({ format: 'jwk' }).x!, 'base64url');

const discordPair = generateKeyPairSync('ed25519');
const DISCORD_KEY = rawEd25519(discordPair.publicKey).toString('hex');
function discordDelivery(body: string, at: number, privateKey = discordPair.privateKey): Delivery {
  const timestamp = String(at);
  return { body, headers: { 'X-Signature-Ed25519': sign(null, Buffer.from(timestamp + body), privateKey).toString('hex'), 'X-Signature-Timestamp': timestamp } };
}
const discordAccepts = (d: Delivery) => verifyKey(d.body, d.headers['X-Signature-Ed25519'], d.headers['X-Signature-Timestamp'], DISCORD_KEY);
const DISCORD_EVENT = examplePayload('discord', 'APPLICATION_AUTHORIZED.json');

describePreset('discord (webhook events)', 'discord', {
  provider: { name: 'discord', publicKeys: [DISCORD_KEY] },
  body: DISCORD_EVENT,
  sign: (body, at) => discordDelivery(body, at),
  accepts: discordAccepts,
  ackStatus: 204,
  expected: { name: 'discord', kind: 'APPLICATION_AUTHORIZED', deliveryId: `discord:${createHash('sha256').update(DISCORD_EVENT).digest('hex')}` },
  signatureHeaders: ['X-Signature-Ed25519'],
  toleranceSeconds: 300,
});

const otherDiscordPair = generateKeyPairSync('ed25519');
it('discord: verifyKey accepts our signed interactions PING and refuses one signed by another key', async () => {
  const ping = examplePayload('discord', 'interaction-ping.json');
  expect(await discordAccepts(discordDelivery(ping, nowSeconds()))).toBe(true);
  expect(await discordAccepts(discordDelivery(ping, nowSeconds(), otherDiscordPair.privateKey))).toBe(false);
});

describe('discord handshakes (contract §10.1 C, H)', () => {
  const t = testApp();
  beforeAll(async () => {
    await registerTrigger(t, 'discord-events', { name: 'discord', publicKeys: [DISCORD_KEY] });
    await registerTrigger(t, 'discord-interactions', { name: 'discord', publicKeys: [DISCORD_KEY], options: { endpoint: 'interactions' } });
  });

  it('answers a signed webhook PING (type 0) 204, publishing nothing', async () => {
    const res = await deliver(t, 'discord-events', discordDelivery(examplePayload('discord', 'webhook-ping.json'), nowSeconds()));
    expect(res.status).toBe(204);
    expect(t.sink.records).toHaveLength(0);
  });

  it('answers a signed interactions PING (type 1) 200 {"type":1}, publishing nothing', async () => {
    const res = await deliver(t, 'discord-interactions', discordDelivery(examplePayload('discord', 'interaction-ping.json'), nowSeconds()));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ type: 1 });
    expect(t.sink.records).toHaveLength(0);
  });

  it('refuses 401 an interactions PING signed by another key (Discord\'s portal checks this)', async () => {
    const forged = discordDelivery(examplePayload('discord', 'interaction-ping.json'), nowSeconds(), otherDiscordPair.privateKey);
    const res = await deliver(t, 'discord-interactions', forged);
    expect(expectError(res, 'UNAUTHORIZED').details).toMatchObject({ reason: 'signature_invalid' });
  });

  it('publishes any other signed interaction and answers 200 {"type":5} (deferred)', async () => {
    const res = await deliver(t, 'discord-interactions', discordDelivery(examplePayload('discord', 'application-command.json'), nowSeconds()));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ type: 5 });
    expect(t.sink.records).toHaveLength(1);
    expect(eventOf(t.sink.records[0]).data.provider).toMatchObject({
      name: 'discord',
      kind: expect.stringMatching(/^interaction\./),
      deliveryId: '786008729715212338',
      verified: true,
    });
  });
});

const telnyxPair = generateKeyPairSync('ed25519');
const TELNYX_KEY = rawEd25519(telnyxPair.publicKey).toString('base64');
const telnyx = new Telnyx({ apiKey: 'KEY_presets_unused', publicKey: TELNYX_KEY });
const TELNYX_BODY = examplePayload('telnyx', 'message.received.json');
describePreset('telnyx', 'telnyx', {
  provider: { name: 'telnyx', publicKeys: [TELNYX_KEY] },
  body: TELNYX_BODY,
  // Telnyx retries the same event (data.id) with meta.attempt counted up.
  redeliveryBody: TELNYX_BODY.replace('"attempt":1', '"attempt":2'),
  sign(body, at) {
    const timestamp = String(at);
    return { body, headers: { 'telnyx-signature-ed25519': sign(null, Buffer.from(`${timestamp}|${body}`), telnyxPair.privateKey).toString('base64'), 'telnyx-timestamp': timestamp } };
  },
  accepts: (d) => telnyx.webhooks.unwrap(d.body, { headers: d.headers, key: TELNYX_KEY }).then(() => true, () => false),
  expected: { name: 'telnyx', kind: 'message.received', deliveryId: 'bf6307bd-884d-4c1f-b6ea-c62b8c495d3c' },
  signatureHeaders: ['telnyx-signature-ed25519'],
  toleranceSeconds: 300,
});

const sendgridPair = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const SENDGRID_KEY = sendgridPair.publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
const eventWebhook = new EventWebhook();
const sendgridAccepts = (key: string, d: Delivery) =>
  eventWebhook.verifySignature(
    eventWebhook.convertPublicKeyToECDSA(key),
    d.body,
    d.headers['X-Twilio-Email-Event-Webhook-Signature'],
    d.headers['X-Twilio-Email-Event-Webhook-Timestamp'],
  );
describePreset('sendgrid', 'sendgrid', {
  // No tolerance by default (§10.H); the stale case needs one set.
  provider: { name: 'sendgrid', publicKeys: [SENDGRID_KEY], toleranceSeconds: 300 },
  body: vector.payload,
  sign(body, at) {
    const timestamp = String(at);
    const signature = sign('sha256', Buffer.from(timestamp + body), sendgridPair.privateKey).toString('base64'); // DER, as SendGrid sends it
    return { body, headers: { 'X-Twilio-Email-Event-Webhook-Signature': signature, 'X-Twilio-Email-Event-Webhook-Timestamp': timestamp } };
  },
  accepts: (d) => sendgridAccepts(SENDGRID_KEY, d),
  expected: { name: 'sendgrid', kind: 'dropped', deliveryId: expect.stringContaining('ZHJvcC0xMDk5NDkxOS1MUnpYbF9OSFN0T0doUTRrb2ZTbV9BLTA') },
  signatureHeaders: ['X-Twilio-Email-Event-Webhook-Signature'],
  toleranceSeconds: 300,
});

describe('sendgrid: SendGrid\'s own published vector (a genuine 2020 delivery)', () => {
  const t = testApp();
  const published: Delivery = {
    body: vector.payload,
    headers: { 'X-Twilio-Email-Event-Webhook-Signature': vector.signature, 'X-Twilio-Email-Event-Webhook-Timestamp': vector.timestamp },
  };
  beforeAll(async () => {
    await registerTrigger(t, 'sendgrid-default', { name: 'sendgrid', publicKeys: [vector.publicKey] });
    await registerTrigger(t, 'sendgrid-tolerant', { name: 'sendgrid', publicKeys: [vector.publicKey], toleranceSeconds: 300 });
  });

  it('is accepted by default, its timestamp being no freshness proof (SendGrid retries keep it)', async () => {
    const res = await deliver(t, 'sendgrid-default', published);
    expect(res.status).toBe(200);
    expect(eventOf(t.sink.records[0]).data.provider).toMatchObject({ name: 'sendgrid', kind: 'dropped', verified: true, authenticates: 'body' });
  });

  it('is refused 401 timestamp_out_of_tolerance where the trigger sets a tolerance', async () => {
    const res = await deliver(t, 'sendgrid-tolerant', published);
    expect(expectError(res, 'UNAUTHORIZED').details).toMatchObject({ reason: 'timestamp_out_of_tolerance' });
  });
});

it('sendgrid: the SDK accepts its published vector (the fixture is intact)', () => {
  expect(sendgridAccepts(vector.publicKey, { body: vector.payload, headers: { 'X-Twilio-Email-Event-Webhook-Signature': vector.signature, 'X-Twilio-Email-Event-Webhook-Timestamp': vector.timestamp } })).toBe(true);
});

const swPair = generateKeyPairSync('ed25519');
const SW_PUBLIC_KEY = `whpk_${rawEd25519(swPair.publicKey).toString('base64')}`;
const SW_ID = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
function swDelivery(body: string, at: number, extraSignatures = ''): Delivery {
  const signature = sign(null, Buffer.from(`${SW_ID}.${at}.${body}`), swPair.privateKey).toString('base64');
  return { body, headers: { 'webhook-id': SW_ID, 'webhook-timestamp': String(at), 'webhook-signature': `${extraSignatures}v1a,${signature}` } };
}
/** The spec's v1a check (standard-webhooks.md, "Signature scheme": ed25519 over `id.timestamp.body`), made with node:crypto. */
function swAccepts(d: Delivery): boolean {
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(SW_PUBLIC_KEY.slice(5), 'base64').toString('base64url') }, format: 'jwk' });
  const signed = `${d.headers['webhook-id']}.${d.headers['webhook-timestamp']}.${d.body}`;
  return d.headers['webhook-signature']
    .split(' ')
    .filter((entry) => entry.startsWith('v1a,'))
    .some((entry) => verify(null, Buffer.from(signed), key, Buffer.from(entry.slice(4), 'base64')));
}

describePreset('standard-webhooks v1a', 'sw-v1a', {
  provider: { name: 'standard-webhooks', publicKeys: [SW_PUBLIC_KEY] },
  body: examplePayload('standard-webhooks', 'contact.created.json'),
  sign: (body, at) => swDelivery(body, at),
  accepts: swAccepts,
  expected: { name: 'standard-webhooks', kind: 'contact.created', deliveryId: SW_ID },
  signatureHeaders: ['webhook-signature'],
  toleranceSeconds: 300,
});

describe('standard-webhooks v1a among other versions', () => {
  const t = testApp();
  beforeAll(() => registerTrigger(t, 'sw-list', { name: 'standard-webhooks', publicKeys: [SW_PUBLIC_KEY] }));

  it('skips versions it cannot check and passes on the valid v1a', async () => {
    const body = JSON.stringify({ ...JSON.parse(examplePayload('standard-webhooks', 'contact.created.json')), type: 'contact.updated' });
    const res = await deliver(t, 'sw-list', swDelivery(body, nowSeconds(), 'v2,Zm9yZ2Vk v1,Zm9yZ2VkIGFnYWlu '));
    expect(res.status).toBe(200);
    expect(eventOf(t.sink.records[0]).data.provider).toMatchObject({ kind: 'contact.updated', deliveryId: SW_ID });
  });
});
