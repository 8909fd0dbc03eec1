import { createHmac } from 'node:crypto';
import request from 'supertest';
import { WorkOS } from '@workos-inc/node';
import { NodeRuntime, WebhooksValidator } from '@paddle/paddle-node-sdk';
import { WebhooksManager } from 'box-node-sdk/lib/managers/webhooks';
import { Signature } from '@hubspot/api-client';
import { WebhooksHelper } from 'square';
import Razorpay from 'razorpay';
import { ADMIN_TOKEN, testApp } from '../helpers/app';
import { expectError, hookUrl, triggerInput } from '../helpers/http';

/**
 * The HMAC presets of contract §10.1 C, each a catalogue entry (a recipe), over HTTP: signed by
 * the provider's SDK where it signs (WorkOS), else signed as its docs say and accepted by its
 * SDK's verifier first (Paddle, Box, HubSpot, Square, Razorpay).
 */

const BASE = 'https://hooks.example.com';
const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
const eventOf = (record: { value: string }) => JSON.parse(record.value);
const b64 = (key: string, text: string, alg = 'sha256') => createHmac(alg, key).update(text).digest('base64');
const hex = (key: string, text: string, alg = 'sha256') => createHmac(alg, key).update(text).digest('hex');

describe('HMAC presets shipped as recipes (contract §10.1 C)', () => {
  const t = testApp({ PUBLIC_BASE_URL: BASE });
  const put = (path: string, provider: Record<string, unknown>) =>
    request(t.admin).put(`/admin/triggers/${path}`).set(admin).send(triggerInput({ provider: provider as never }));
  const lastProvider = () => eventOf(t.sink.records.at(-1)!).data.provider;

  it('workos: signed by the WorkOS SDK, published with its kind and id; a stale signature is refused', async () => {
    expect((await put('workos', { name: 'workos', secrets: ['wh_sec_workos'] })).status).toBe(200);
    const workos = new WorkOS('sk_test_gateway');
    // The shape of WorkOS's documented user.created event.
    const body = JSON.stringify({
      id: 'event_01HWWSJQVTHBPPCNPSFAYNE6AN',
      event: 'user.created',
      data: { object: 'user', id: 'user_01E4ZCR3C56J083X43JQXF3JK5', email: 'marcelina.davis@example.com' },
      created_at: '2024-05-01T12:00:00.000Z',
    });
    const ms = Date.now();
    const header = `t=${ms}, v1=${await workos.webhooks.computeSignature(ms, body, 'wh_sec_workos')}`;
    const res = await request(t.app).post(hookUrl('workos')).set('Content-Type', 'application/json').set('WorkOS-Signature', header).send(body);
    expect(res.status).toBe(200);
    expect(lastProvider()).toEqual({ name: 'workos', kind: 'user.created', deliveryId: 'event_01HWWSJQVTHBPPCNPSFAYNE6AN', verified: true, authenticates: 'body' });
    expect(eventOf(t.sink.records.at(-1)!).data.headers['workos-signature']).toBeUndefined();
    const old = ms - 181_000;
    const stale = `t=${old}, v1=${await workos.webhooks.computeSignature(old, body, 'wh_sec_workos')}`;
    const refused = await request(t.app).post(hookUrl('workos')).set('Content-Type', 'application/json').set('WorkOS-Signature', stale).send(body);
    expect(expectError(refused, 'UNAUTHORIZED').details.reason).toBe('timestamp_out_of_tolerance');
  });

  it('paddle: ts=;h1= with two h1 while rotating; the SDK accepts the signature', async () => {
    const secret = 'pdl_ntfset_01gkpjp8bkm3tm53kdgkx6sms7_6h3qd3uFSi9YCD3OLYAShQI90XTI1nNg';
    expect((await put('paddle', { name: 'paddle', secrets: [secret] })).status).toBe(200);
    const body = JSON.stringify({
      event_id: 'evt_01h8bzakzx3hm2fmen703n5q45',
      event_type: 'transaction.completed',
      occurred_at: '2023-08-21T11:57:47.390028Z',
      notification_id: 'ntf_01h8bzam1z32agrxjwhjgqk8w6',
      data: { id: 'txn_01h8bz8b3bv2qevrdfy1c5fjdt' },
    });
    const ts = Math.floor(Date.now() / 1000);
    const h1 = hex(secret, `${ts}:${body}`);
    NodeRuntime.initialize(); // what the Paddle client's constructor does on Node
    expect(await new WebhooksValidator().isValidSignature(body, secret, `ts=${ts};h1=${h1}`)).toBe(true);
    const res = await request(t.app)
      .post(hookUrl('paddle'))
      .set('Content-Type', 'application/json')
      .set('Paddle-Signature', `ts=${ts};h1=${'0'.repeat(64)};h1=${h1}`)
      .send(body);
    expect(res.status).toBe(200);
    expect(lastProvider()).toMatchObject({ name: 'paddle', kind: 'transaction.completed', deliveryId: 'ntf_01h8bzam1z32agrxjwhjgqk8w6' });
  });

  it('box: primary and secondary keys over {body}{timestamp} (RFC 3339); the SDK accepts; a wrong signature version is refused', async () => {
    expect((await put('box', { name: 'box', secrets: ['SamplePrimaryKey', 'SampleSecondaryKey'] })).status).toBe(200);
    const body = JSON.stringify({
      type: 'webhook_event',
      id: 'eb0c4e06-751f-442c-86f8-fd5bb404dbec',
      created_at: '2016-11-08T22:38:52-08:00',
      trigger: 'FILE.UPLOADED',
      source: { id: '73835521473', type: 'file' },
    });
    const timestamp = new Date(Date.now() - 5000).toISOString().replace(/\.\d{3}Z$/, '+00:00');
    const headers = {
      'box-delivery-id': 'f96bb54b-ee16-4fc5-aa65-8c2d9e5b546f',
      'box-delivery-timestamp': timestamp,
      'box-signature-algorithm': 'HmacSHA256',
      'box-signature-primary': b64('WrongPrimaryKey', body + timestamp),
      'box-signature-secondary': b64('SampleSecondaryKey', body + timestamp),
      'box-signature-version': '1',
    };
    expect(await WebhooksManager.validateMessage(body, headers, 'SamplePrimaryKey', { secondaryKey: 'SampleSecondaryKey' })).toBe(true);
    const res = await request(t.app).post(hookUrl('box')).set('Content-Type', 'application/json').set(headers).send(body);
    expect(res.status).toBe(200);
    expect(lastProvider()).toMatchObject({ name: 'box', kind: 'FILE.UPLOADED', deliveryId: 'eb0c4e06-751f-442c-86f8-fd5bb404dbec' });
    const v2 = await request(t.app).post(hookUrl('box')).set('Content-Type', 'application/json').set({ ...headers, 'box-signature-version': '2' }).send(body);
    expect(expectError(v2, 'UNAUTHORIZED').details.reason).toBe('signature_missing');
  });

  it('hubspot: v3 over {method}{url}{body}{timestamp} with the public URL; the SDK accepts; a batch gets one id for all its events', async () => {
    expect((await put('hubspot', { name: 'hubspot', secrets: ['hubspot-client-secret'] })).status).toBe(200);
    const item = { subscriptionId: 2, portalId: 3, appId: 4, subscriptionType: 'contact.creation', attemptNumber: 0, changeFlag: 'CREATED', changeSource: 'CRM' };
    const body = JSON.stringify([
      { eventId: 1, occurredAt: 1700000000000, objectId: 123, ...item },
      { eventId: 2, occurredAt: 1700000000001, objectId: 124, ...item },
    ]);
    const url = `${BASE}${hookUrl('hubspot')}`;
    const timestamp = Date.now();
    const signature = b64('hubspot-client-secret', `POST${url}${body}${timestamp}`);
    expect(Signature.isValid({ signatureVersion: 'v3', signature, clientSecret: 'hubspot-client-secret', requestBody: body, url, method: 'POST', timestamp })).toBe(true);
    const send = () =>
      request(t.app)
        .post(hookUrl('hubspot'))
        .set('Content-Type', 'application/json')
        .set('X-HubSpot-Signature-v3', signature)
        .set('X-HubSpot-Request-Timestamp', String(timestamp))
        .send(body);
    const res = await send();
    expect(res.status).toBe(200);
    expect(lastProvider()).toMatchObject({ name: 'hubspot', kind: 'contact.creation', deliveryId: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) });
    const again = await send();
    expect(again.headers['idempotent-replayed']).toBe('true');
  });

  it('square: {url}{body} with the public URL; the SDK accepts', async () => {
    expect((await put('square', { name: 'square', secrets: ['square-signature-key'] })).status).toBe(200);
    const body = JSON.stringify({
      merchant_id: '6SSW7HV8K2ST5',
      type: 'payment.created',
      event_id: '13b867cf-db3d-4b1c-90b6-2f32a9d78124',
      created_at: '2020-02-06T21:27:30.792Z',
      data: { type: 'payment', id: 'KkAkhdMsgzn59SM8A89WgKwekxLZY' },
    });
    const url = `${BASE}${hookUrl('square')}`;
    const signature = b64('square-signature-key', url + body);
    expect(await WebhooksHelper.verifySignature({ requestBody: body, signatureHeader: signature, signatureKey: 'square-signature-key', notificationUrl: url })).toBe(true);
    const res = await request(t.app).post(hookUrl('square')).set('Content-Type', 'application/json').set('x-square-hmacsha256-signature', signature).send(body);
    expect(res.status).toBe(200);
    expect(lastProvider()).toMatchObject({ name: 'square', kind: 'payment.created', deliveryId: '13b867cf-db3d-4b1c-90b6-2f32a9d78124' });
  });

  it('a {url} preset is refused at PUT while PUBLIC_BASE_URL is unset', async () => {
    const bare = testApp();
    const res = await request(bare.admin).put('/admin/triggers/sq').set(admin).send(triggerInput({ provider: { name: 'square', secrets: ['k'] } as never }));
    expect(expectError(res, 'BAD_REQUEST').details).toEqual([expect.objectContaining({ path: 'provider.name', message: expect.stringContaining('PUBLIC_BASE_URL') })]);
  });

  it('razorpay: one header over the body; the SDK accepts; the unsigned event id header is backed by the body claim', async () => {
    expect((await put('razorpay', { name: 'razorpay', secrets: ['razorpay-webhook-secret'] })).status).toBe(200);
    const body = JSON.stringify({
      entity: 'event',
      account_id: 'acc_BFQ7uQEaa7j2z7',
      event: 'payment.captured',
      contains: ['payment'],
      payload: { payment: { entity: { id: 'pay_DESlfW9H8K9uqM', amount: 100 } } },
      created_at: 1567674606,
    });
    const signature = hex('razorpay-webhook-secret', body);
    expect(Razorpay.validateWebhookSignature(body, signature, 'razorpay-webhook-secret')).toBe(true);
    const send = (eventId: string) =>
      request(t.app).post(hookUrl('razorpay')).set('Content-Type', 'application/json').set('X-Razorpay-Signature', signature).set('x-razorpay-event-id', eventId).send(body);
    expect((await send('EVT_1')).status).toBe(200);
    expect(lastProvider()).toMatchObject({ name: 'razorpay', kind: 'payment.captured', deliveryId: 'EVT_1' });
    const before = t.sink.records.length;
    // A captured delivery replayed under another (unsigned) id header: the body claim answers it as a duplicate.
    const replay = await send('EVT_2');
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(t.sink.records).toHaveLength(before);
  });
});

describe('twitch (contract §10.1 C: a signed handshake)', () => {
  const t = testApp();
  const secret = 'twitch-secret-0123456789';
  const sign = (id: string, ts: string, body: string) => `sha256=${hex(secret, id + ts + body)}`;
  const send = (type: string, body: string, signature?: string, id = 'e76c6bd4-55c9-4987-8304-da1588d8988b') => {
    const ts = new Date().toISOString().replace('Z', '123456Z');
    return request(t.app)
      .post(hookUrl('twitch'))
      .set('Content-Type', 'application/json')
      .set('Twitch-Eventsub-Message-Id', id)
      .set('Twitch-Eventsub-Message-Timestamp', ts)
      .set('Twitch-Eventsub-Message-Type', type)
      .set('Twitch-Eventsub-Message-Signature', signature ?? sign(id, ts, body))
      .send(body);
  };
  beforeAll(async () => {
    const res = await request(t.admin).put('/admin/triggers/twitch').set(admin).send(triggerInput({ provider: { name: 'twitch', secrets: [secret] } as never }));
    expect(res.status).toBe(200);
  });
  const verification = (challenge: string) =>
    JSON.stringify({ challenge, subscription: { id: 'f1c2a387-161a-49f9-a165-0f21d7a4e1c4', status: 'webhook_callback_verification_pending', type: 'channel.follow', version: '2' } });

  it('answers webhook_callback_verification with the challenge as text/plain and publishes nothing', async () => {
    const before = t.sink.records.length;
    const res = await send('webhook_callback_verification', verification('pogchamp-kappa-360noscope-vohiyo'));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toBe('pogchamp-kappa-360noscope-vohiyo');
    expect(t.sink.records).toHaveLength(before);
  });

  it('refuses a forged verification (401) and a challenge of another shape (400 invalid_handshake)', async () => {
    const forged = await send('webhook_callback_verification', verification('abc'), `sha256=${'0'.repeat(64)}`);
    expect(expectError(forged, 'UNAUTHORIZED').details.reason).toBe('signature_invalid');
    const odd = await send('webhook_callback_verification', verification('<script>'));
    expect(expectError(odd, 'BAD_REQUEST').details.reason).toBe('invalid_handshake');
  });

  it('publishes notifications by subscription type and revocations as kind revocation, under the signed message id', async () => {
    const notification = JSON.stringify({ subscription: { id: 'f1c2a387', type: 'channel.follow', version: '2', status: 'enabled' }, event: { user_id: '1234', broadcaster_user_id: '1337' } });
    expect((await send('notification', notification, undefined, 'msg-1')).status).toBe(200);
    expect(eventOf(t.sink.records.at(-1)!).data.provider).toEqual({ name: 'twitch', kind: 'channel.follow', deliveryId: 'msg-1', verified: true, authenticates: 'body' });
    const revocation = JSON.stringify({ subscription: { id: 'f1c2a387', status: 'authorization_revoked', type: 'channel.follow', version: '2' } });
    expect((await send('revocation', revocation, undefined, 'msg-2')).status).toBe(200);
    expect(eventOf(t.sink.records.at(-1)!).data.provider).toMatchObject({ kind: 'revocation', deliveryId: 'msg-2' });
  });
});
