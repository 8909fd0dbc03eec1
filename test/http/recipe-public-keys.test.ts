import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import request from 'supertest';
import { verifyKey } from 'discord-interactions';
import { TelnyxWebhook } from 'telnyx/lib/webhooks';
import { EventWebhook } from '@sendgrid/eventwebhook';
import { ADMIN_TOKEN, testApp } from '../helpers/app';
import { expectError, hookUrl, triggerInput } from '../helpers/http';

/**
 * The public-key presets of contract §10.1 C over HTTP: Discord (its handshakes and
 * acknowledgements), Telnyx, SendGrid and Standard Webhooks v1a. None of their SDKs signs, so
 * each delivery is signed as the provider documents and accepted by the SDK's verifier first.
 */

const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
const eventOf = (record: { value: string }) => JSON.parse(record.value);
const rawEd25519 = (key: KeyObject) => Buffer.from(key.export({ format: 'jwk' }).x as string, 'base64url');
const nowSeconds = () => String(Math.floor(Date.now() / 1000));

describe('discord (contract §10.1 C, H)', () => {
  const t = testApp();
  const pair = generateKeyPairSync('ed25519');
  const publicKey = rawEd25519(pair.publicKey).toString('hex');
  const signed = (path: string, body: string, signature?: string) => {
    const timestamp = nowSeconds();
    return request(t.app)
      .post(hookUrl(path))
      .set('Content-Type', 'application/json')
      .set('X-Signature-Ed25519', signature ?? sign(null, Buffer.from(timestamp + body), pair.privateKey).toString('hex'))
      .set('X-Signature-Timestamp', timestamp)
      .send(body);
  };
  beforeAll(async () => {
    const put = (path: string, provider: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      request(t.admin).put(`/admin/triggers/${path}`).set(admin).send(triggerInput({ provider: provider as never, ...extra }));
    expect((await put('discord-events', { name: 'discord', publicKeys: [publicKey] })).status).toBe(200);
    expect((await put('discord-interactions', { name: 'discord', publicKeys: [publicKey], options: { endpoint: 'interactions' } })).status).toBe(200);
    const answer = { status: 200, body: { type: 4, data: { content: 'on it' } } };
    expect((await put('discord-answers', { name: 'discord', publicKeys: [publicKey], options: { endpoint: 'interactions' } }, { response: answer })).status).toBe(200);
  });

  it('webhook events: a signed PING (type 0) is answered 204 and publishes nothing; the SDK accepts the signature', async () => {
    const body = JSON.stringify({ version: 1, application_id: '1234560123453231555', type: 0 });
    const timestamp = nowSeconds();
    const signature = sign(null, Buffer.from(timestamp + body), pair.privateKey).toString('hex');
    expect(await verifyKey(body, signature, timestamp, publicKey)).toBe(true);
    const before = t.sink.records.length;
    const res = await request(t.app).post(hookUrl('discord-events')).set('Content-Type', 'application/json').set('X-Signature-Ed25519', signature).set('X-Signature-Timestamp', timestamp).send(body);
    expect(res.status).toBe(204);
    expect(t.sink.records).toHaveLength(before);
  });

  it('webhook events: an event is published by event.type, id discord:<sha256 of the body>, acknowledged 204', async () => {
    const body = JSON.stringify({
      version: 1,
      application_id: '1234560123453231555',
      type: 1,
      event: { type: 'APPLICATION_AUTHORIZED', timestamp: '2024-10-18T14:42:53.064834', data: { integration_type: 1, scopes: ['applications.commands'], user: { id: '1111', username: 'example' } } },
    });
    const res = await signed('discord-events', body);
    expect(res.status).toBe(204);
    expect(eventOf(t.sink.records.at(-1)!).data.provider).toEqual({
      name: 'discord',
      kind: 'APPLICATION_AUTHORIZED',
      deliveryId: expect.stringMatching(/^discord:[0-9a-f]{64}$/),
      verified: true,
      authenticates: 'body',
    });
  });

  it('interactions: a signed PING (type 1) → 200 {"type":1}; a forged one → 401 (both are what Discord\'s portal checks)', async () => {
    const ping = JSON.stringify({ id: '1299011229442244608', application_id: '1234560123453231555', type: 1, token: 'interaction-token', version: 1 });
    const before = t.sink.records.length;
    const res = await signed('discord-interactions', ping);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ type: 1 });
    const forged = await signed('discord-interactions', ping, sign(null, Buffer.from('0' + ping), generateKeyPairSync('ed25519').privateKey).toString('hex'));
    expect(expectError(forged, 'UNAUTHORIZED').details.reason).toBe('signature_invalid');
    expect(t.sink.records).toHaveLength(before);
  });

  it('interactions: a command is published as interaction.2 under its id and answered {"type":5}, or with the trigger\'s response', async () => {
    const command = JSON.stringify({ id: '1299011229442244609', application_id: '1234560123453231555', type: 2, token: 'interaction-token', version: 1, data: { id: '771825006014889984', name: 'deploy', type: 1 } });
    const res = await signed('discord-interactions', command);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ type: 5 });
    expect(eventOf(t.sink.records.at(-1)!).data.provider).toMatchObject({ kind: 'interaction.2', deliveryId: '1299011229442244609' });
    const answered = await signed('discord-answers', command);
    expect(answered.body).toEqual({ type: 4, data: { content: 'on it' } });
    // A retry of the same interaction is a replay: the same answer, nothing published again.
    const before = t.sink.records.length;
    const again = await signed('discord-interactions', command);
    expect(again.body).toEqual({ type: 5 });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(t.sink.records).toHaveLength(before);
  });

  it('refuses a stale timestamp (300 s, both ways)', async () => {
    const body = JSON.stringify({ version: 1, application_id: '1', type: 0 });
    const timestamp = String(Math.floor(Date.now() / 1000) - 301);
    const res = await request(t.app)
      .post(hookUrl('discord-events'))
      .set('Content-Type', 'application/json')
      .set('X-Signature-Ed25519', sign(null, Buffer.from(timestamp + body), pair.privateKey).toString('hex'))
      .set('X-Signature-Timestamp', timestamp)
      .send(body);
    expect(expectError(res, 'UNAUTHORIZED').details.reason).toBe('timestamp_out_of_tolerance');
  });
});

describe('publicKeys at PUT and on reads (contract §10.1 B)', () => {
  const t = testApp();
  const put = (provider: Record<string, unknown>) => request(t.admin).put('/admin/triggers/keys').set(admin).send(triggerInput({ provider: provider as never }));

  it('refuses a key of the wrong size, naming its index; refuses secrets on a public-key preset', async () => {
    const good = rawEd25519(generateKeyPairSync('ed25519').publicKey).toString('hex');
    const bad = await put({ name: 'discord', publicKeys: [good, 'abcd'] });
    expect(expectError(bad, 'BAD_REQUEST').details).toEqual([expect.objectContaining({ path: 'provider.publicKeys.1' })]);
    const secrets = await put({ name: 'telnyx', secrets: ['s'] });
    expect(expectError(secrets, 'BAD_REQUEST').details).toEqual([expect.objectContaining({ path: 'provider.secrets' })]);
  });

  it('shows public keys only as sha256 fingerprints', async () => {
    const key = rawEd25519(generateKeyPairSync('ed25519').publicKey).toString('base64');
    expect((await put({ name: 'telnyx', publicKeys: [key] })).status).toBe(200);
    const read = await request(t.admin).get('/admin/triggers/keys').set(admin);
    expect(read.body.data.provider).toMatchObject({ name: 'telnyx', secretsSet: 0, publicKeys: [expect.stringMatching(/^sha256:[0-9a-f]{64}$/)] });
    expect(JSON.stringify(read.body)).not.toContain(key);
  });
});

describe('telnyx, sendgrid, standard-webhooks v1a', () => {
  const t = testApp();
  const put = (path: string, provider: Record<string, unknown>) => request(t.admin).put(`/admin/triggers/${path}`).set(admin).send(triggerInput({ provider: provider as never }));
  const lastProvider = () => eventOf(t.sink.records.at(-1)!).data.provider;

  it('telnyx: {timestamp}|{body} Ed25519, a base64 key; the SDK accepts', async () => {
    const pair = generateKeyPairSync('ed25519');
    const key = rawEd25519(pair.publicKey).toString('base64');
    expect((await put('telnyx', { name: 'telnyx', publicKeys: [key] })).status).toBe(200);
    const body = JSON.stringify({
      data: { event_type: 'message.received', id: 'b301ed3f-1490-491f-995f-6e64e69674d4', occurred_at: '2024-01-15T20:16:07.588+00:00', payload: { direction: 'inbound', type: 'SMS' }, record_type: 'event' },
      meta: { attempt: 1, delivered_to: 'https://example.com/webhooks' },
    });
    const timestamp = nowSeconds();
    const headers = { 'telnyx-signature-ed25519': sign(null, Buffer.from(`${timestamp}|${body}`), pair.privateKey).toString('base64'), 'telnyx-timestamp': timestamp };
    await expect(new TelnyxWebhook(key).verify(body, headers)).resolves.toBeUndefined();
    const res = await request(t.app).post(hookUrl('telnyx')).set('Content-Type', 'application/json').set(headers).send(body);
    expect(res.status).toBe(200);
    expect(lastProvider()).toEqual({ name: 'telnyx', kind: 'message.received', deliveryId: 'b301ed3f-1490-491f-995f-6e64e69674d4', verified: true, authenticates: 'body' });
  });

  it('sendgrid: ECDSA P-256 (DER, base64) over {timestamp}{body}, a base64 SPKI key; the SDK accepts; an old timestamp passes (retries keep it)', async () => {
    const pair = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const spki = pair.publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
    expect((await put('sendgrid', { name: 'sendgrid', publicKeys: [spki] })).status).toBe(200);
    const body = JSON.stringify([
      { email: 'example@test.com', timestamp: 1513299569, 'smtp-id': '<14c5d75ce93.dfd.64b469@ismtpd-555>', event: 'delivered', category: 'cat facts', sg_event_id: 'sg_event_id_1', sg_message_id: 'sg_message_id' },
      { email: 'example@test.com', timestamp: 1513299569, 'smtp-id': '<14c5d75ce93.dfd.64b469@ismtpd-555>', event: 'delivered', category: 'cat facts', sg_event_id: 'sg_event_id_2', sg_message_id: 'sg_message_id' },
    ]);
    const timestamp = String(Math.floor(Date.now() / 1000) - 7200);
    const signature = sign('sha256', Buffer.from(timestamp + body), pair.privateKey).toString('base64');
    const webhook = new EventWebhook();
    const pem = `-----BEGIN PUBLIC KEY-----\n${spki}\n-----END PUBLIC KEY-----`;
    expect(webhook.verifySignature(webhook.convertPublicKeyToECDSA(pem), body, signature, timestamp)).toBe(true);
    const res = await request(t.app)
      .post(hookUrl('sendgrid'))
      .set('Content-Type', 'application/json')
      .set('X-Twilio-Email-Event-Webhook-Signature', signature)
      .set('X-Twilio-Email-Event-Webhook-Timestamp', timestamp)
      .send(body);
    expect(res.status).toBe(200);
    expect(lastProvider()).toMatchObject({ name: 'sendgrid', kind: 'delivered', deliveryId: expect.stringMatching(/^sha256:/) });
    const tampered = await request(t.app)
      .post(hookUrl('sendgrid'))
      .set('Content-Type', 'application/json')
      .set('X-Twilio-Email-Event-Webhook-Signature', signature)
      .set('X-Twilio-Email-Event-Webhook-Timestamp', timestamp)
      .send(body.replace('delivered', 'bounce'));
    expect(expectError(tampered, 'UNAUTHORIZED').details.reason).toBe('signature_invalid');
  });

  it('standard-webhooks: v1a (Ed25519, whpk_ key) in the same header list as v1; a trigger with only a key skips v1', async () => {
    const pair = generateKeyPairSync('ed25519');
    const whpk = `whpk_${rawEd25519(pair.publicKey).toString('base64')}`;
    expect((await put('sw-v1a', { name: 'standard-webhooks', publicKeys: [whpk] })).status).toBe(200);
    const body = JSON.stringify({ type: 'user.created', timestamp: '2022-11-03T20:26:10.344522Z', data: { id: '1f81eb52-5198-4599-803e-771906343485' } });
    const id = 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W';
    const timestamp = nowSeconds();
    const v1a = sign(null, Buffer.from(`${id}.${timestamp}.${body}`), pair.privateKey).toString('base64');
    const send = (signature: string) =>
      request(t.app).post(hookUrl('sw-v1a')).set('Content-Type', 'application/json').set('webhook-id', id).set('webhook-timestamp', timestamp).set('webhook-signature', signature).send(body);
    const res = await send(`v1,${Buffer.alloc(32).toString('base64')} v1a,${v1a}`);
    expect(res.status).toBe(200);
    expect(lastProvider()).toMatchObject({ name: 'standard-webhooks', kind: 'user.created', deliveryId: id });
    expect(expectError(await send(`v1,${Buffer.alloc(32).toString('base64')}`), 'UNAUTHORIZED').details.reason).toBe('signature_missing');
  });
});
