/**
 * The paypal and apple-app-store presets through HTTP (contract §10.1 D, E, F). Certificate
 * chains are throw-away ones made with openssl; their roots reach the gateway only through the
 * test app's injected trust anchors (as the key fetcher's CA is), never by changing the
 * production roots: a test shows that without the injection the same deliveries are refused.
 * Apple's deliveries are accepted by Apple's SignedDataVerifier (the test root as its root)
 * first; PayPal ships no Node verifier, so its deliveries are checked as its guide says first.
 * PayPal's certificate host is a local stand-in: nothing leaves the machine.
 */
import { once } from 'node:events';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { createPrivateKey, sign, verify as verifySignature, X509Certificate } from 'node:crypto';
import { Environment, SignedDataVerifier } from '@apple/app-store-server-library';
import { CompactSign } from 'jose';
import request from 'supertest';
import { ADMIN_TOKEN, testApp } from '../helpers/app';
import { expectError, hookUrl } from '../helpers/http';
import { eventOf, putTrigger, registerTrigger, type TestApp } from '../helpers/presets';
import { paypalSignedString } from '../../src/providers/families/paypal';
import { makeCa, publicResolver, startKeyHost, type KeyHost, type TestCa } from '../unit/keys/key-host';
import { derBase64, makeChain, type TestChain } from '../unit/families/cert-chain';

let tls: TestCa;
let host: KeyHost;
let paypalChain: TestChain;
let appleChain: TestChain;
let t: TestApp;

beforeAll(() => {
  tls = makeCa();
  paypalChain = makeChain({ leafKey: 'rsa', leafSubject: '/C=US/O=PayPal, Inc./CN=messageverificationcerts.paypal.com' });
  appleChain = makeChain({
    leafKey: 'ec',
    leafSubject: '/CN=Prod ECC Mac App Store and iTunes Store Receipt Signing',
    leafExtensions: ['1.2.840.113635.100.6.11.1=ASN1:NULL'],
    intermediateExtensions: ['1.2.840.113635.100.6.2.1=ASN1:NULL'],
  });
});
beforeEach(async () => {
  host = await startKeyHost(tls);
  t = app();
});
afterEach(() => host.close());

/** The test app; `anchored` false: the production roots (public roots for PayPal, Apple Root CA - G3). */
function app(anchored = true) {
  const trustAnchors = anchored ? { paypal: [new X509Certificate(paypalChain.root)], appleAppStore: [new X509Certificate(appleChain.root)] } : undefined;
  return testApp({}, { keyTransport: { resolver: publicResolver, dial: host.dial, ca: tls.ca, limits: { connectTimeoutMs: 1000, totalTimeoutMs: 1000, maxBodyBytes: 64 * 1024 }, ...(trustAnchors && { trustAnchors }) } });
}

const deliveries = (path: string) => request(t.admin).get(`/admin/triggers/${path}/deliveries`).set({ Authorization: `Bearer ${ADMIN_TOKEN}` });

it.each([
  ['paypal', ['api.paypal.com', 'api-m.paypal.com', 'api.sandbox.paypal.com', 'api-m.sandbox.paypal.com'], 'PAYMENTS.PAYMENT.CREATED'],
  ['apple-app-store', [], 'CONSUMPTION_REQUEST'],
])('the catalogue lists %s: family x509, authenticates body, keys none, the hosts it may fetch from, its kinds with sources', async (name, fetches, kind) => {
  const res = await request(t.admin).get(`/admin/providers/${name}`).set({ Authorization: `Bearer ${ADMIN_TOKEN}` });
  expect(res.status).toBe(200);
  expect(res.body.data).toMatchObject({ name, family: 'x509', authenticates: 'body', keys: 'none', fetches, eventKinds: expect.arrayContaining([kind]) });
  expect(res.body.data.eventKindsSources.length).toBeGreaterThan(0);
});

describe('paypal preset (RSA-SHA256, certificate by PAYPAL-CERT-URL)', () => {
  // The webhook event of PayPal's PHP SDK sample (sample/notifications/ValidateWebhookEvent.php), trimmed.
  const EVENT = JSON.stringify({
    id: 'WH-7MU294299R542214K-4N1831857K851783H',
    event_version: '1.0',
    create_time: '2019-08-29T10:49:03.439Z',
    resource_type: 'payment',
    event_type: 'PAYMENTS.PAYMENT.CREATED',
    summary: 'Checkout payment is created and approved by buyer',
    resource: { id: 'PAYID-LVT22VY7N839502VJ678725M', state: 'approved', create_time: '2019-08-29T10:47:51Z' },
  });
  const WEBHOOK_ID = '9XL90610J3647323C';
  const CERT_URL = 'https://api-m.paypal.com/v1/notifications/certs/CERT-360caa42-fca2a594-a5cafa77';
  const CERT_ROUTE = 'api-m.paypal.com /v1/notifications/certs/CERT-360caa42-fca2a594-a5cafa77';
  const TRANSMISSION_ID = 'd938e770-8046-11e6-8103-6b62a8a99ac4';
  const served = () => paypalChain.leaf + paypalChain.intermediate;
  const options = (extra: Record<string, unknown> = {}) => ({ webhookId: WEBHOOK_ID, certificates: { [CERT_URL]: served() }, ...extra });
  const isoNow = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

  /** The headers PayPal sends, signed as its guide says: RSA-SHA256 over id|time|webhookId|crc32(body), decimal. */
  function headers(body = EVENT, extra: Record<string, string> = {}, webhookId = WEBHOOK_ID): Record<string, string> {
    const transmissionId = extra['PAYPAL-TRANSMISSION-ID'] ?? TRANSMISSION_ID;
    const time = isoNow();
    const signature = sign('sha256', Buffer.from(paypalSignedString(transmissionId, time, webhookId, Buffer.from(body))), paypalChain.leafKey).toString('base64');
    return {
      'PAYPAL-TRANSMISSION-ID': transmissionId,
      'PAYPAL-TRANSMISSION-TIME': time,
      'PAYPAL-TRANSMISSION-SIG': signature,
      'PAYPAL-CERT-URL': CERT_URL,
      'PAYPAL-AUTH-ALGO': 'SHA256withRSA',
      ...extra,
    };
  }

  /** PayPal's documented check: the certificate's key verifies the signature over the same string. */
  function paypalGuideAccepts(sent: Record<string, string>, body = EVENT): boolean {
    const signed = paypalSignedString(sent['PAYPAL-TRANSMISSION-ID'], sent['PAYPAL-TRANSMISSION-TIME'], WEBHOOK_ID, Buffer.from(body));
    return verifySignature('sha256', Buffer.from(signed), new X509Certificate(paypalChain.leaf).publicKey, Buffer.from(sent['PAYPAL-TRANSMISSION-SIG'], 'base64'));
  }

  const post = (body: string, sent: Record<string, string>) => request(t.app).post(hookUrl('paypal')).set('Content-Type', 'application/json').set(sent).send(body);

  it('a genuine delivery is published (kind event_type, id the transmission id); the same transmission again is 2xx, nothing published', async () => {
    await registerTrigger(t, 'paypal', { name: 'paypal', options: options() });
    const sent = headers();
    expect(paypalGuideAccepts(sent)).toBe(true);
    const res = await post(EVENT, sent);
    expect(res.status).toBe(200);
    expect(eventOf(t.sink.records[0]).data.provider).toEqual({ name: 'paypal', kind: 'PAYMENTS.PAYMENT.CREATED', deliveryId: TRANSMISSION_ID, verified: true, authenticates: 'body' });
    expect(JSON.stringify(t.sink.records)).not.toContain(sent['PAYPAL-TRANSMISSION-SIG']);
    const replay = await post(EVENT, headers());
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(t.sink.records).toHaveLength(1);
    expect(host.accepted()).toBe(0);
  });

  it('one changed byte is 401 signature_invalid; no signature 401 signature_missing; signed for another webhook id 401 (the id is signed)', async () => {
    await registerTrigger(t, 'paypal', { name: 'paypal', options: options() });
    const sent = headers();
    expect(expectError(await post(EVENT.replace('approved by', 'approved bz'), sent), 'UNAUTHORIZED').details).toEqual({ reason: 'signature_invalid' });
    const { 'PAYPAL-TRANSMISSION-SIG': _dropped, ...unsigned } = sent;
    expect(expectError(await post(EVENT, unsigned), 'UNAUTHORIZED').details).toEqual({ reason: 'signature_missing' });
    expect(expectError(await post(EVENT, headers(EVENT, {}, '1AB23456CD789012E')), 'UNAUTHORIZED').details).toEqual({ reason: 'signature_invalid' });
    expect(t.sink.records).toHaveLength(0);
  });

  describe('a PAYPAL-CERT-URL off the allow-list', () => {
    let listener: Server;
    let connections = 0;
    beforeEach(async () => {
      connections = 0;
      listener = createServer((socket) => {
        connections++;
        socket.destroy();
      });
      listener.listen(0, '127.0.0.1');
      await once(listener, 'listening');
    });
    afterEach(() => listener.close());

    it('pointed at a local listener is 401 key_url_not_allowed, never connected; the log says keyUrlAllowed false, not the URL', async () => {
      await registerTrigger(t, 'paypal', { name: 'paypal', options: { webhookId: WEBHOOK_ID } });
      const { port } = listener.address() as AddressInfo;
      for (const url of [`https://127.0.0.1:${port}/v1/notifications/certs/CERT-1`, `https://localhost:${port}/v1/notifications/certs/CERT-1`, 'https://evil.example.com/v1/notifications/certs/CERT-1']) {
        const res = await post(EVENT, headers(EVENT, { 'PAYPAL-CERT-URL': url }));
        expect(expectError(res, 'UNAUTHORIZED').details).toEqual({ reason: 'key_url_not_allowed' });
      }
      expect(connections).toBe(0);
      expect(host.accepted()).toBe(0);
      const log = await deliveries('paypal');
      expect(log.body.data[0].diagnostics).toMatchObject({ keyUrlAllowed: false });
      expect(JSON.stringify(log.body)).not.toContain('evil.example.com');
      expect(t.sink.records).toHaveLength(0);
    });
  });

  it("without a pinned certificate the chain is fetched from PayPal's host (a local stand-in), then cached", async () => {
    host.route(CERT_ROUTE, (_req, res) => res.writeHead(200, { 'Content-Type': 'application/x-pem-file' }).end(served()));
    await registerTrigger(t, 'paypal', { name: 'paypal', options: { webhookId: WEBHOOK_ID } });
    expect((await post(EVENT, headers())).status).toBe(200);
    expect((await post(EVENT, headers(EVENT, { 'PAYPAL-TRANSMISSION-ID': 'e938e770-8046-11e6-8103-6b62a8a99ac5' }))).status).toBe(200);
    expect(host.requests).toEqual([CERT_ROUTE]);
    expect(t.sink.records).toHaveLength(2);
  });

  it('a stale PAYPAL-TRANSMISSION-TIME is 401 timestamp_out_of_tolerance before any certificate is fetched', async () => {
    host.route(CERT_ROUTE, (_req, res) => res.writeHead(200, { 'Content-Type': 'application/x-pem-file' }).end(served()));
    await registerTrigger(t, 'paypal', { name: 'paypal', options: { webhookId: WEBHOOK_ID } });
    const stale = new Date(Date.now() - 3600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const transmissionId = 'f938e770-8046-11e6-8103-6b62a8a99ac6';
    const sig = sign('sha256', Buffer.from(paypalSignedString(transmissionId, stale, WEBHOOK_ID, Buffer.from(EVENT))), paypalChain.leafKey).toString('base64');
    const sent = { ...headers(EVENT, { 'PAYPAL-TRANSMISSION-ID': transmissionId }), 'PAYPAL-TRANSMISSION-TIME': stale, 'PAYPAL-TRANSMISSION-SIG': sig };
    expect(expectError(await post(EVENT, sent), 'UNAUTHORIZED').details).toEqual({ reason: 'timestamp_out_of_tolerance' });
    expect(host.requests).toEqual([]);
    expect(t.sink.records).toHaveLength(0);
  });

  it("a certificate host that hangs is 503 key_unavailable with Retry-After (given up on after the 1 s test bound), nothing published", async () => {
    host.route(CERT_ROUTE, () => undefined); // never answers
    await registerTrigger(t, 'paypal', { name: 'paypal', options: { webhookId: WEBHOOK_ID } });
    const res = await post(EVENT, headers());
    expect(expectError(res, 'SERVICE_UNAVAILABLE').details).toEqual({ reason: 'key_unavailable' });
    expect(res.headers['retry-after']).toBe('2');
    expect(host.requests).toEqual([CERT_ROUTE]);
    expect(t.sink.records).toHaveLength(0);
  }, 20_000);

  it("with the production roots (nothing injected) the test chain is refused 401: the public roots are not weakened", async () => {
    t = app(false);
    await registerTrigger(t, 'paypal', { name: 'paypal', options: options() });
    expect(expectError(await post(EVENT, headers()), 'UNAUTHORIZED').details).toEqual({ reason: 'signature_invalid' });
    expect(t.sink.records).toHaveLength(0);
  });

  it('options are checked at PUT: a certificate URL off the allow-list, a bad PEM or no webhookId is 400 naming the path', async () => {
    const offList = await putTrigger(t, 'p1', { name: 'paypal', options: { webhookId: WEBHOOK_ID, certificates: { 'https://evil.example.com/v1/notifications/certs/X': served() } } });
    expect(offList.status).toBe(400);
    expect(JSON.stringify(offList.body)).toContain('provider.options.certificates');
    const badPem = await putTrigger(t, 'p2', { name: 'paypal', options: { webhookId: WEBHOOK_ID, certificates: { [CERT_URL]: 'not a certificate' } } });
    expect(badPem.status).toBe(400);
    expect(JSON.stringify(badPem.body)).toContain('provider.options.certificates');
    const noId = await putTrigger(t, 'p3', { name: 'paypal', options: {} });
    expect(noId.status).toBe(400);
    expect(JSON.stringify(noId.body)).toContain('provider.options.webhookId');
    expect((await putTrigger(t, 'p4', { name: 'paypal', secrets: ['x'], options: { webhookId: WEBHOOK_ID } })).status).toBe(400);
  });
});

describe('apple-app-store preset (JWS, x5c chained to the pinned root)', () => {
  /** The decoded notification of Apple's library fixture (tests/resources/models/signedConsumptionRequestNotification.json), Sandbox, signed now. */
  const notification = (data: Record<string, unknown> = {}) => ({
    notificationType: 'CONSUMPTION_REQUEST',
    notificationUUID: '002e14d5-51f5-4503-b5a8-c3a1af68eb20',
    data: {
      environment: 'Sandbox',
      appAppleId: 41234,
      bundleId: 'com.example',
      bundleVersion: '1.2.3',
      signedTransactionInfo: 'signed_transaction_info_value',
      signedRenewalInfo: 'signed_renewal_info_value',
      status: 1,
      consumptionRequestReason: 'UNINTENDED_PURCHASE',
      ...data,
    },
    version: '2.0',
    signedDate: Date.now(),
  });
  /** As Apple signs: ES256 JWS, the chain in x5c (leaf, intermediate, root). */
  const signPayload = (payload: unknown) =>
    new CompactSign(Buffer.from(JSON.stringify(payload)))
      .setProtectedHeader({ alg: 'ES256', x5c: [appleChain.leaf, appleChain.intermediate, appleChain.root].map(derBase64) })
      .sign(createPrivateKey(appleChain.leafKey));
  const appleAccepts = (jws: string, bundleId = 'com.example') =>
    new SignedDataVerifier([new X509Certificate(appleChain.root).raw], false, Environment.SANDBOX, bundleId).verifyAndDecodeNotification(jws);
  const post = (body: string) => request(t.app).post(hookUrl('apple')).set('Content-Type', 'application/json').send(body);
  const body = (jws: string) => JSON.stringify({ signedPayload: jws });
  const options = { bundleId: 'com.example', environment: 'Sandbox' };

  it("a notification Apple's SignedDataVerifier accepts is published (kind, notificationUUID); Apple's retry is 2xx, nothing published", async () => {
    await registerTrigger(t, 'apple', { name: 'apple-app-store', options });
    const jws = await signPayload(notification());
    expect(await appleAccepts(jws)).toMatchObject({ notificationUUID: '002e14d5-51f5-4503-b5a8-c3a1af68eb20' });
    const res = await post(body(jws));
    expect(res.status).toBe(200);
    expect(eventOf(t.sink.records[0]).data.provider).toEqual({ name: 'apple-app-store', kind: 'CONSUMPTION_REQUEST', deliveryId: '002e14d5-51f5-4503-b5a8-c3a1af68eb20', verified: true, authenticates: 'body' });
    const retry = await post(body(await signPayload(notification())));
    expect(retry.status).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(t.sink.records).toHaveLength(1);
    expect(host.accepted()).toBe(0);
  });

  it('one changed byte of the JWS is 401 signature_invalid; no signedPayload is 401 signature_missing', async () => {
    await registerTrigger(t, 'apple', { name: 'apple-app-store', options });
    const jws = await signPayload(notification());
    const at = jws.length - 10;
    const changed = `${jws.slice(0, at)}${jws[at] === 'A' ? 'B' : 'A'}${jws.slice(at + 1)}`;
    expect(expectError(await post(body(changed)), 'UNAUTHORIZED').details).toEqual({ reason: 'signature_invalid' });
    expect(expectError(await post(JSON.stringify({ notificationType: 'TEST' })), 'UNAUTHORIZED').details).toEqual({ reason: 'signature_missing' });
    expect(t.sink.records).toHaveLength(0);
  });

  it("a genuine notification of another app or environment is 403 sender_not_allowed; the bundle only in the delivery log", async () => {
    await registerTrigger(t, 'apple', { name: 'apple-app-store', options });
    const other = await signPayload(notification({ bundleId: 'com.other.app' }));
    expect(await appleAccepts(other, 'com.other.app')).toMatchObject({ notificationType: 'CONSUMPTION_REQUEST' });
    const res = await post(body(other));
    expect(expectError(res, 'FORBIDDEN').details).toEqual({ reason: 'sender_not_allowed' });
    expect(res.text).not.toContain('com.other.app');
    expect((await deliveries('apple')).body.data[0].diagnostics).toMatchObject({ sender: 'com.other.app' });
    const production = await signPayload(notification({ environment: 'Production' }));
    expect(expectError(await post(body(production)), 'FORBIDDEN').details).toEqual({ reason: 'sender_not_allowed' });
    expect(t.sink.records).toHaveLength(0);
  });

  it('with the production root (Apple Root CA - G3, nothing injected) the test chain is refused 401', async () => {
    t = app(false);
    await registerTrigger(t, 'apple', { name: 'apple-app-store', options });
    expect(expectError(await post(body(await signPayload(notification()))), 'UNAUTHORIZED').details).toEqual({ reason: 'signature_invalid' });
    expect(t.sink.records).toHaveLength(0);
  });

  it('options are checked at PUT: 400 naming the path; environment defaults to Production', async () => {
    const bad = await putTrigger(t, 'a1', { name: 'apple-app-store', options: { bundleId: 'com.example', environment: 'Staging' } });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('provider.options.environment');
    const none = await putTrigger(t, 'a2', { name: 'apple-app-store', options: {} });
    expect(none.status).toBe(400);
    expect(JSON.stringify(none.body)).toContain('provider.options.bundleId');
    const ok = await putTrigger(t, 'a3', { name: 'apple-app-store', options: { bundleId: 'com.example' } });
    expect(ok.status).toBe(200);
    expect(ok.body.data.provider.options).toMatchObject({ environment: 'Production' });
  });
});
