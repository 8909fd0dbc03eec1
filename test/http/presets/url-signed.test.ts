/**
 * Issue 36, family R4 (contract §10.1 C): the URL the provider called is signed, so these triggers
 * need PUBLIC_BASE_URL (`{url}` = PUBLIC_BASE_URL + path + query as called). HubSpot v3 is accepted
 * first by @hubspot/api-client's Signature.isValid, Square by square's WebhooksHelper.verifySignature;
 * Trello ships no Node verifier, so it is signed as its docs say and checked by openssl.
 */
import { createHmac } from 'node:crypto';
import { Signature } from '@hubspot/api-client';
import { WebhooksHelper } from 'square';
import { opensslHmac } from '../../fixtures/providers/openssl';
import { testApp } from '../../helpers/app';
import { expectError } from '../../helpers/http';
import { PUBLIC_BASE_URL, deliver, describePreset, eventOf, examplePayload, nowSeconds, publicUrl, registerTrigger, type Delivery } from '../../helpers/presets';

const env = { PUBLIC_BASE_URL };

const HUBSPOT_SECRET = 'hubspot-app-client-secret-presets';
const HUBSPOT_URL = publicUrl('hubspot');
const HUBSPOT_BODY = examplePayload('hubspot', 'contact.propertyChange.json');
describePreset('hubspot', 'hubspot', {
  env,
  provider: { name: 'hubspot', secrets: [HUBSPOT_SECRET] },
  body: HUBSPOT_BODY,
  // HubSpot retries with the same eventId and a higher attemptNumber (the body changes, the event does not).
  redeliveryBody: HUBSPOT_BODY.replace('"attemptNumber":0', '"attemptNumber":1'),
  sign(body, at) {
    const timestamp = String(at * 1000);
    const signature = createHmac('sha256', HUBSPOT_SECRET).update(`POST${HUBSPOT_URL}${body}${timestamp}`).digest('base64');
    return { body, headers: { 'X-HubSpot-Signature-v3': signature, 'X-HubSpot-Request-Timestamp': timestamp } };
  },
  accepts(d) {
    try {
      return Signature.isValid({
        signatureVersion: 'v3',
        method: 'POST',
        url: HUBSPOT_URL,
        requestBody: d.body,
        timestamp: Number(d.headers['X-HubSpot-Request-Timestamp']),
        signature: d.headers['X-HubSpot-Signature-v3'],
        clientSecret: HUBSPOT_SECRET,
      });
    } catch {
      return false; // the SDK throws on a stale timestamp
    }
  },
  expected: { name: 'hubspot', kind: 'contact.propertyChange', deliveryId: expect.stringContaining('3816279340') },
  signatureHeaders: ['X-HubSpot-Signature-v3'],
  toleranceSeconds: 300,
});

function hubspotDelivery(body: string, at: number): Delivery {
  const timestamp = String(at * 1000);
  const url = publicUrl('hubspot-batch');
  return { body, headers: { 'X-HubSpot-Signature-v3': createHmac('sha256', HUBSPOT_SECRET).update(`POST${url}${body}${timestamp}`).digest('base64'), 'X-HubSpot-Request-Timestamp': timestamp } };
}

describe('hubspot: a delivery of several events (contract §10.1 C: one id synthesized from all)', () => {
  const t = testApp(env);
  const [first] = JSON.parse(HUBSPOT_BODY);
  const batch = (attempt: number) => JSON.stringify([0, 1].map((i) => ({ ...first, eventId: first.eventId + i, objectId: first.objectId + i, attemptNumber: attempt })));
  beforeAll(() => registerTrigger(t, 'hubspot-batch', { name: 'hubspot', secrets: [HUBSPOT_SECRET] }));

  it('is published once, under an id that is not the first event\'s alone, and its retry is a replay', async () => {
    const res = await deliver(t, 'hubspot-batch', hubspotDelivery(batch(0), nowSeconds() - 30));
    expect(res.status).toBe(200);
    expect(t.sink.records).toHaveLength(1);
    const provider = eventOf(t.sink.records[0]).data.provider;
    expect(provider).toMatchObject({ name: 'hubspot', kind: 'contact.propertyChange', verified: true });
    expect(provider.deliveryId).not.toBe(String(first.eventId));

    const retry = await deliver(t, 'hubspot-batch', hubspotDelivery(batch(1), nowSeconds()));
    expect(retry.status).toBe(200);
    expect(t.sink.records).toHaveLength(1);
  });
});

const SQUARE_KEY = 'square-webhook-signature-key-presets';
const squareSign = (url: string, body: string) => createHmac('sha256', SQUARE_KEY).update(url + body).digest('base64');
const squareAccepts = (url: string, d: Delivery) =>
  WebhooksHelper.verifySignature({ requestBody: d.body, signatureHeader: d.headers['x-square-hmacsha256-signature'], signatureKey: SQUARE_KEY, notificationUrl: url });
const SQUARE_BODY = examplePayload('square', 'payment.created.json');
describePreset('square', 'square', {
  env,
  provider: { name: 'square', secrets: [SQUARE_KEY] },
  body: SQUARE_BODY,
  sign: (body) => ({ body, headers: { 'x-square-hmacsha256-signature': squareSign(publicUrl('square'), body) } }),
  accepts: (d) => squareAccepts(publicUrl('square'), d),
  expected: { name: 'square', kind: 'payment.created', deliveryId: '13b867cf-db3d-4b1c-90b6-2f32a9d78124' },
  signatureHeaders: ['x-square-hmacsha256-signature'],
});

const forOtherUrl = { body: SQUARE_BODY, headers: { 'x-square-hmacsha256-signature': squareSign(publicUrl('square-elsewhere'), SQUARE_BODY) } };

it('square: the SDK accepts a delivery only for the URL it was signed for', async () => {
  expect(await squareAccepts(publicUrl('square-elsewhere'), forOtherUrl)).toBe(true);
  expect(await squareAccepts(publicUrl('square-url'), forOtherUrl)).toBe(false);
});

describe('square: the signature binds the URL Square called', () => {
  const t = testApp(env);
  beforeAll(() => registerTrigger(t, 'square-url', { name: 'square', secrets: [SQUARE_KEY] }));

  it('refuses 401 signature_invalid a genuine delivery made for another trigger\'s URL', async () => {
    const res = await deliver(t, 'square-url', forOtherUrl);
    expect(expectError(res, 'UNAUTHORIZED').details).toMatchObject({ reason: 'signature_invalid' });
    expect(t.sink.records).toHaveLength(0);
  });

  it('verifies over the query string as called', async () => {
    const signed = { body: SQUARE_BODY, headers: { 'x-square-hmacsha256-signature': squareSign(publicUrl('square-url', '?tenant=acme'), SQUARE_BODY) } };
    expect(await squareAccepts(publicUrl('square-url', '?tenant=acme'), signed)).toBe(true);
    expect((await deliver(t, 'square-url', signed, '?tenant=acme')).status).toBe(200);
  });
});

const TRELLO_SECRET = 'trello-app-secret-presets';
const TRELLO_CALLBACK = publicUrl('trello');
describePreset('trello', 'trello', {
  env,
  provider: { name: 'trello', secrets: [TRELLO_SECRET] },
  body: examplePayload('trello', 'voteOnCard.json'),
  sign: (body) => ({ body, headers: { 'X-Trello-Webhook': createHmac('sha1', TRELLO_SECRET).update(body + TRELLO_CALLBACK).digest('base64') } }),
  // Trello's documented check (developer.atlassian.com/cloud/trello/guides/rest-api/webhooks/#webhook-signatures), by openssl.
  accepts: (d) => opensslHmac('sha1', TRELLO_SECRET, d.body + TRELLO_CALLBACK).toString('base64') === d.headers['X-Trello-Webhook'],
  expected: { name: 'trello', kind: 'voteOnCard', deliveryId: '51f9424bcd6e040f3c002412' },
  signatureHeaders: ['X-Trello-Webhook'],
});
