/**
 * Issue 36, family R2 (contract §10.1 C): the signed timestamp (and id) in headers of their own.
 * Box deliveries are accepted first by box-node-sdk's WebhooksManager.validateMessage (two keys,
 * primary and secondary); Twitch and Zendesk ship no Node verifier, so they are signed as their
 * docs say and checked by openssl. Twitch's handshake and revocation: contract §10.1 C.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { WebhooksManager } from 'box-node-sdk/lib/managers/webhooks';
import request from 'supertest';
import { opensslHmac } from '../../fixtures/providers/openssl';
import { testApp } from '../../helpers/app';
import { expectError, hookUrl } from '../../helpers/http';
import { deliver, describePreset, eventOf, examplePayload, nowSeconds, registerTrigger, type Delivery } from '../../helpers/presets';

const lowerCased = (headers: Record<string, string>) => Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));

/** RFC 3339 with a -07:00 offset, as Box's own examples show it (`2016-07-11T10:10:33-07:00`). */
function boxTimestamp(at: number): string {
  const local = new Date((at - 7 * 3600) * 1000).toISOString().slice(0, 19);
  return `${local}-07:00`;
}

const BOX_PRIMARY = 'box-primary-signature-key-presets';
const BOX_SECONDARY = 'box-secondary-signature-key-presets';
const boxSign = (key: string, body: string, timestamp: string) => createHmac('sha256', key).update(body).update(timestamp).digest('base64');
function boxDelivery(body: string, at: number, primaryKey = BOX_PRIMARY): Delivery {
  const timestamp = boxTimestamp(at);
  return {
    body,
    headers: {
      'BOX-DELIVERY-ID': randomUUID(), // a new one on every attempt (Box's docs); the event id is the body's
      'BOX-DELIVERY-TIMESTAMP': timestamp,
      'BOX-SIGNATURE-PRIMARY': boxSign(primaryKey, body, timestamp),
      'BOX-SIGNATURE-SECONDARY': boxSign(BOX_SECONDARY, body, timestamp),
      'BOX-SIGNATURE-VERSION': '1',
      'BOX-SIGNATURE-ALGORITHM': 'HmacSHA256',
    },
  };
}
const boxAccepts = (d: Delivery) => WebhooksManager.validateMessage(d.body, lowerCased(d.headers), BOX_PRIMARY, { secondaryKey: BOX_SECONDARY });
const BOX_BODY = examplePayload('box', 'FILE.UPLOADED.json');

describePreset('box', 'box', {
  provider: { name: 'box', secrets: [BOX_PRIMARY, BOX_SECONDARY] },
  body: BOX_BODY,
  sign: (body, at) => boxDelivery(body, at),
  accepts: boxAccepts,
  expected: { name: 'box', kind: 'FILE.UPLOADED', deliveryId: 'eb0c4e06-751f-442c-86f8-fd5bb404dbec' },
  signatureHeaders: ['BOX-SIGNATURE-PRIMARY', 'BOX-SIGNATURE-SECONDARY'],
  toleranceSeconds: 600,
});

const BOX_ROTATED_BODY = BOX_BODY.replace('eb0c4e06-751f-442c-86f8-fd5bb404dbec', 'eb0c4e06-751f-442c-86f8-fd5bb404dbee');

it('box: the SDK accepts a delivery whose primary signature is by a retired key and whose secondary is good', async () => {
  expect(await boxAccepts(boxDelivery(BOX_ROTATED_BODY, nowSeconds(), 'box-retired-primary-key'))).toBe(true);
});

describe('box: the secondary key verifies while the primary is being rotated', () => {
  const t = testApp();
  beforeAll(() => registerTrigger(t, 'box-rotating', { name: 'box', secrets: [BOX_PRIMARY, BOX_SECONDARY] }));

  it('accepts a delivery whose primary signature is by a retired key and whose secondary is good (as the SDK does)', async () => {
    const delivery = boxDelivery(BOX_ROTATED_BODY, nowSeconds(), 'box-retired-primary-key');
    const res = await deliver(t, 'box-rotating', delivery);
    expect(res.status).toBe(200);
    expect(eventOf(t.sink.records[0]).data.provider).toMatchObject({ name: 'box', deliveryId: 'eb0c4e06-751f-442c-86f8-fd5bb404dbee' });
  });

  it('refuses 401 signature_missing without box-signature-version: 1 (requireHeaders)', async () => {
    const delivery = boxDelivery(BOX_BODY, nowSeconds());
    const res = await deliver(t, 'box-rotating', { ...delivery, headers: { ...delivery.headers, 'BOX-SIGNATURE-VERSION': '2' } });
    expect(expectError(res, 'UNAUTHORIZED').details).toMatchObject({ reason: 'signature_missing' });
  });
});

const TWITCH_SECRET = 'twitch-eventsub-secret-presets';
/** RFC 3339 with nanoseconds, as Twitch sends it (`2019-11-16T10:11:12.634234626Z`). */
const twitchTimestamp = (at: number) => new Date(at * 1000).toISOString().replace('Z', '634234Z');
function twitchDelivery(body: string, at: number, messageType: string, messageId: string, retry = '0'): Delivery {
  const timestamp = twitchTimestamp(at);
  const signature = `sha256=${createHmac('sha256', TWITCH_SECRET).update(messageId + timestamp + body).digest('hex')}`;
  return {
    body,
    headers: {
      'Twitch-Eventsub-Message-Id': messageId,
      'Twitch-Eventsub-Message-Retry': retry,
      'Twitch-Eventsub-Message-Type': messageType,
      'Twitch-Eventsub-Message-Signature': signature,
      'Twitch-Eventsub-Message-Timestamp': timestamp,
      'Twitch-Eventsub-Subscription-Type': 'channel.follow',
      'Twitch-Eventsub-Subscription-Version': '2',
    },
  };
}
/** Twitch's documented check (dev.twitch.tv/docs/eventsub/handling-webhook-events#verifying-the-event-message), by openssl. */
function twitchAccepts(d: Delivery): boolean {
  const h = d.headers;
  const expected = `sha256=${opensslHmac('sha256', TWITCH_SECRET, h['Twitch-Eventsub-Message-Id'] + h['Twitch-Eventsub-Message-Timestamp'] + d.body).toString('hex')}`;
  return expected === h['Twitch-Eventsub-Message-Signature'];
}
const TWITCH_MESSAGE_ID = 'befa7b53-d79d-478f-86b9-120f112b044e';
let twitchAttempt = 0;

describePreset('twitch', 'twitch', {
  provider: { name: 'twitch', secrets: [TWITCH_SECRET] },
  body: examplePayload('twitch', 'channel.follow.notification.json'),
  // Each signing is another attempt of the same message: Twitch keeps the id and counts retries.
  sign: (body, at) => twitchDelivery(body, at, 'notification', TWITCH_MESSAGE_ID, String(twitchAttempt++)),
  accepts: twitchAccepts,
  expected: { name: 'twitch', kind: 'channel.follow', deliveryId: TWITCH_MESSAGE_ID },
  signatureHeaders: ['Twitch-Eventsub-Message-Signature'],
  toleranceSeconds: 600,
});

describe('twitch: the callback verification handshake and revocations (contract §10.1 C)', () => {
  const t = testApp();
  const VERIFICATION = examplePayload('twitch', 'webhook_callback_verification.json');
  beforeAll(() => registerTrigger(t, 'twitch-hs', { name: 'twitch', secrets: [TWITCH_SECRET] }));

  it('answers a signed webhook_callback_verification 200 text/plain with the challenge, publishing nothing', async () => {
    const res = await deliver(t, 'twitch-hs', twitchDelivery(VERIFICATION, nowSeconds(), 'webhook_callback_verification', randomUUID()));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toBe('pogchamp-kappa-360noscope-vohiyo');
    expect(t.sink.records).toHaveLength(0);
  });

  it('refuses 401 signature_invalid a forged verification, echoing nothing', async () => {
    const forged = twitchDelivery(VERIFICATION, nowSeconds(), 'webhook_callback_verification', randomUUID());
    const res = await deliver(t, 'twitch-hs', { ...forged, headers: { ...forged.headers, 'Twitch-Eventsub-Message-Signature': `sha256=${'0'.repeat(64)}` } });
    expect(expectError(res, 'UNAUTHORIZED').details).toMatchObject({ reason: 'signature_invalid' });
    expect(res.text).not.toContain('pogchamp');
  });

  it.each([
    ['a space', 'two words'],
    ['markup', '<script>alert(1)</script>'],
    ['257 characters', 'a'.repeat(257)],
  ])('refuses 400 invalid_handshake a signed challenge with %s', async (_label, challenge) => {
    const body = JSON.stringify({ ...JSON.parse(VERIFICATION), challenge });
    const res = await deliver(t, 'twitch-hs', twitchDelivery(body, nowSeconds(), 'webhook_callback_verification', randomUUID()));
    expect(expectError(res, 'BAD_REQUEST').details).toMatchObject({ reason: 'invalid_handshake' });
    expect(t.sink.records).toHaveLength(0);
  });

  it('publishes a signed revocation as kind "revocation"', async () => {
    const messageId = randomUUID();
    const res = await deliver(t, 'twitch-hs', twitchDelivery(examplePayload('twitch', 'revocation.json'), nowSeconds(), 'revocation', messageId));
    expect(res.status).toBe(200);
    expect(t.sink.records).toHaveLength(1);
    expect(eventOf(t.sink.records[0]).data.provider).toMatchObject({ name: 'twitch', kind: 'revocation', deliveryId: messageId, verified: true });
  });

  it('answers no GET (Twitch\'s handshake is a signed POST)', async () => {
    expect((await request(t.app).get(hookUrl('twitch-hs')).query({ challenge: 'x' })).status).toBe(405);
  });
});

const ZENDESK_SECRET = 'zendesk-webhook-signing-secret-presets';
/** ISO 8601 without fractions, as Zendesk sends it (`2024-04-17T17:18:10Z`). */
const zendeskTimestamp = (at: number) => new Date(at * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
describePreset('zendesk', 'zendesk', {
  provider: { name: 'zendesk', secrets: [ZENDESK_SECRET] },
  body: examplePayload('zendesk', 'user.active_changed.json'),
  sign(body, at) {
    const timestamp = zendeskTimestamp(at);
    return {
      body,
      headers: {
        'X-Zendesk-Webhook-Id': '01GK8E6BKWMJZD2T8Y5AXJQMG5',
        'X-Zendesk-Webhook-Signature': createHmac('sha256', ZENDESK_SECRET).update(timestamp + body).digest('base64'),
        'X-Zendesk-Webhook-Signature-Timestamp': timestamp,
      },
    };
  },
  // Zendesk's documented check (developer.zendesk.com/documentation/webhooks/verifying), by openssl.
  accepts: (d) =>
    opensslHmac('sha256', ZENDESK_SECRET, d.headers['X-Zendesk-Webhook-Signature-Timestamp'] + d.body).toString('base64') === d.headers['X-Zendesk-Webhook-Signature'],
  expected: { name: 'zendesk', kind: 'zen:event-type:user.active_changed', deliveryId: '2b24ef10-19d4-4740-93cf-8f98ec4776c0' },
  signatureHeaders: ['X-Zendesk-Webhook-Signature'],
  toleranceSeconds: 300,
});
