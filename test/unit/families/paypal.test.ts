import { once } from 'node:events';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { sign, X509Certificate } from 'node:crypto';
import { KeyFetcher } from '../../../src/keys/key-fetcher';
import { paypalSignedString, verifyPaypal, type PaypalHeaders, type PaypalOptions } from '../../../src/providers/families/paypal';
import { makeCa, publicResolver, startKeyHost, type KeyHost, type TestCa } from '../keys/key-host';
import { makeChain, type TestChain } from './cert-chain';

// The webhook event of PayPal's PHP SDK sample (sample/notifications/ValidateWebhookEvent.php), trimmed.
const event = Buffer.from(
  JSON.stringify({
    id: 'WH-7MU294299R542214K-4N1831857K851783H',
    event_version: '1.0',
    create_time: '2019-08-29T10:49:03.439Z',
    resource_type: 'payment',
    event_type: 'PAYMENTS.PAYMENT.CREATED',
    summary: 'Checkout payment is created and approved by buyer',
    resource: { id: 'PAYID-LVT22VY7N839502VJ678725M', state: 'approved', create_time: '2019-08-29T10:47:51Z' },
  }),
);
const WEBHOOK_ID = '9XL90610J3647323C';
const CERT_URL = 'https://api-m.paypal.com/v1/notifications/certs/CERT-360caa42-fca2a594-a5cafa77';
const CERT_ROUTE = 'api-m.paypal.com /v1/notifications/certs/CERT-360caa42-fca2a594-a5cafa77';
const TRANSMISSION_ID = 'd938e770-8046-11e6-8103-6b62a8a99ac4';

let paypal: TestChain;
let elsewhere: TestChain;
let tls: TestCa;
let host: KeyHost;

beforeAll(() => {
  paypal = makeChain({ leafKey: 'rsa', leafSubject: '/C=US/O=PayPal, Inc./CN=messageverificationcerts.paypal.com' });
  elsewhere = makeChain({ leafKey: 'rsa', leafSubject: '/CN=messageverificationcerts.paypal.com' });
  tls = makeCa();
});
beforeEach(async () => {
  host = await startKeyHost(tls);
});
afterEach(() => host.close());

const served = (chain = paypal) => chain.leaf + chain.intermediate;
const anchors = () => [new X509Certificate(paypal.root)];
const keys = (extra = {}) => new KeyFetcher({ enabled: true, resolver: publicResolver, dial: host.dial, ca: tls.ca, ...extra });
const pinned = (extra: Partial<PaypalOptions> = {}): PaypalOptions => ({ webhookId: WEBHOOK_ID, certificates: { [CERT_URL]: served() }, ...extra });
const isoNow = (offsetSeconds = 0) => new Date(Date.now() + offsetSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The headers PayPal sends, signed as its guide says: RSA-SHA256 over id|time|webhookId|crc32 (decimal). */
function signed(overrides: Partial<PaypalHeaders> = {}, raw = event, key = paypal.leafKey, webhookId = WEBHOOK_ID): PaypalHeaders {
  const transmissionTime = overrides.transmissionTime ?? isoNow();
  const transmissionId = overrides.transmissionId ?? TRANSMISSION_ID;
  const signature = sign('sha256', Buffer.from(paypalSignedString(transmissionId, transmissionTime, webhookId, raw)), key).toString('base64');
  return { transmissionId, transmissionTime, transmissionSig: signature, certUrl: CERT_URL, authAlgo: 'SHA256withRSA', ...overrides };
}

function verify(headers: PaypalHeaders, options = pinned(), fetcher = keys(), raw = event, nowSeconds = Math.floor(Date.now() / 1000)) {
  return verifyPaypal({ headers, raw, options, keys: fetcher, toleranceSeconds: 300, nowSeconds, trustAnchors: anchors() });
}

describe('paypal (X.509 certificate by URL)', () => {
  test('the signed string ends in the CRC-32 of the body in decimal, as PayPal documents', () => {
    // CRC-32 of "hello" is 0x3610a686.
    expect(paypalSignedString('id', '2016-09-21T22:00:46Z', 'wh', Buffer.from('hello'))).toBe(`id|2016-09-21T22:00:46Z|wh|${0x3610a686}`);
  });

  test('a signed delivery with the pinned chain is accepted: kind event_type, id the transmission id; nothing fetched', async () => {
    expect(await verify(signed())).toEqual({ ok: true, kind: 'PAYMENTS.PAYMENT.CREATED', deliveryId: TRANSMISSION_ID, keySource: 'pinned' });
    expect(host.accepted()).toBe(0);
  });

  test('without a pinned certificate the chain is fetched from PayPal (its local stand-in), then cached', async () => {
    host.route(CERT_ROUTE, (_req, res) => res.writeHead(200).end(served()));
    const fetcher = keys();
    const options = pinned({ certificates: undefined });
    expect(await verify(signed(), options, fetcher)).toMatchObject({ ok: true, keySource: 'fetched' });
    expect(await verify(signed(), options, fetcher)).toMatchObject({ ok: true, keySource: 'cache' });
    expect(host.requests).toEqual([CERT_ROUTE]);
  });

  test('the certificate host unreachable is key_unavailable (503, never 401), as is KEY_FETCH=off', async () => {
    const options = pinned({ certificates: undefined });
    expect(await verify(signed(), options)).toEqual({ ok: false, reason: 'key_unavailable' });
    expect(await verify(signed(), options, keys({ enabled: false }))).toEqual({ ok: false, reason: 'key_unavailable' });
  });

  test('a leaf served without its intermediate does not chain: signature_invalid', async () => {
    expect(await verify(signed(), pinned({ certificates: { [CERT_URL]: paypal.leaf } }))).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  test('a chain to another root is signature_invalid, even with a valid signature', async () => {
    const headers = signed({}, event, elsewhere.leafKey);
    expect(await verify(headers, pinned({ certificates: { [CERT_URL]: served(elsewhere) } }))).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  test('a certificate that is not PayPal\'s, under the right root, is signature_invalid', async () => {
    const other = makeChain({ leafKey: 'rsa', leafSubject: '/CN=shop.example.com' });
    const headers = signed({}, event, other.leafKey);
    const result = await verifyPaypal({
      headers, raw: event, options: pinned({ certificates: { [CERT_URL]: served(other) } }), keys: keys(),
      toleranceSeconds: 300, nowSeconds: Math.floor(Date.now() / 1000), trustAnchors: [new X509Certificate(other.root)],
    });
    expect(result).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  test.each([
    ['another body', () => verify(signed(), pinned(), keys(), Buffer.from(event.toString().replace('approved', 'refunded')))],
    ['another webhook id', () => verify(signed(), pinned({ webhookId: 'OTHERWEBHOOK1' }))],
    ['another transmission id', () => verify({ ...signed(), transmissionId: 'aaaaaaaa-8046-11e6-8103-6b62a8a99ac4' })],
    ['a signature by another key', () => verify(signed({}, event, elsewhere.leafKey))],
    ['another auth algorithm', () => verify(signed({ authAlgo: 'SHA1withRSA' }))],
  ])('%s is signature_invalid', async (_name, run) => {
    expect(await run()).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  test('a transmission time outside the tolerance is timestamp_out_of_tolerance, either way', async () => {
    // One clock for the header and the check, so a slow RSA sign cannot shift the gap across a second.
    const now = Math.floor(Date.now() / 1000);
    const at = (offsetSeconds: number) => new Date((now + offsetSeconds) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const verifyAt = (offsetSeconds: number) => verify(signed({ transmissionTime: at(offsetSeconds) }), pinned(), keys(), event, now);
    expect(await verifyAt(-301)).toEqual({ ok: false, reason: 'timestamp_out_of_tolerance' });
    expect(await verifyAt(301)).toEqual({ ok: false, reason: 'timestamp_out_of_tolerance' });
    expect(await verifyAt(-250)).toMatchObject({ ok: true });
  });

  test.each([
    ['no signature', { transmissionSig: undefined }],
    ['no transmission id', { transmissionId: undefined }],
    ['no certificate URL', { certUrl: undefined }],
    ['a signature that is not base64', { transmissionSig: '!!!' }],
    ['a signature longer than any RSA key signs', { transmissionSig: 'A'.repeat(1404) }],
    ['a transmission time that is not RFC 3339', { transmissionTime: 'yesterday' }],
    ['a transmission id with a pipe', { transmissionId: 'a|b' }],
  ])('%s is signature_missing', async (_name, overrides) => {
    expect(await verify({ ...signed(), ...overrides })).toEqual({ ok: false, reason: 'signature_missing' });
  });

  describe('a PAYPAL-CERT-URL off the allow-list: key_url_not_allowed, nothing fetched', () => {
    let listener: Server;
    let connections = 0;
    let port = 0;
    beforeEach(async () => {
      connections = 0;
      listener = createServer((socket) => {
        connections++;
        socket.destroy();
      });
      listener.listen(0, '127.0.0.1');
      await once(listener, 'listening');
      port = (listener.address() as AddressInfo).port;
    });
    afterEach(() => listener.close());

    test.each([
      ['a local listener', (port: number) => `https://127.0.0.1:${port}/v1/notifications/certs/CERT-1`],
      ['a look-alike host', () => 'https://api-m.paypal.com.evil.example.com/v1/notifications/certs/CERT-1'],
      ['another path on PayPal', () => 'https://api-m.paypal.com/v1/oauth2/token'],
      ['plain http', () => 'http://api-m.paypal.com/v1/notifications/certs/CERT-1'],
      ['another host', () => 'https://evil.example.com/v1/notifications/certs/CERT-1'],
    ])('%s', async (_name, urlAt) => {
      const url = urlAt(port);
      // The pinned map even names it: a URL off the list is refused before any key is looked up.
      const result = await verify(signed({ certUrl: url }), pinned({ certificates: { [url]: served() } }));
      expect(result).toEqual({ ok: false, reason: 'key_url_not_allowed' });
      expect(connections).toBe(0);
      expect(host.accepted()).toBe(0);
    });
  });
});
