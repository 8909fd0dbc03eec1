import { once } from 'node:events';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { KeyFetcher } from '../../../src/keys/key-fetcher';
import { verifyAwsSns, type AwsSnsOptions } from '../../../src/providers/families/aws-sns';
import { confirmSnsSubscription } from '../../../src/providers/families/aws-sns-confirm';
import { makeCa, makeSigningCertificate, publicResolver, startKeyHost, type KeyHost, type TestCa } from '../keys/key-host';
import {
  CERT_URL,
  notification,
  signSns,
  snsValidatorAccepts,
  subscriptionConfirmation,
  TOPIC,
  unsubscribeConfirmation,
  type SnsBody,
} from './sns-messages';

let tls: TestCa;
let aws: { cert: string; key: string };
let host: KeyHost;

beforeAll(() => {
  tls = makeCa();
  aws = makeSigningCertificate();
});
beforeEach(async () => {
  host = await startKeyHost(tls);
});
afterEach(() => host.close());

const CERT_ROUTE = `sns.us-west-2.amazonaws.com ${new URL(CERT_URL).pathname}`;
const keys = (extra = {}) => new KeyFetcher({ enabled: true, resolver: publicResolver, dial: host.dial, ca: tls.ca, ...extra });
const pinned = (extra: Partial<AwsSnsOptions> = {}): AwsSnsOptions => ({ topicArns: [TOPIC], certificates: { [CERT_URL]: aws.cert }, ...extra });

function verify(message: SnsBody, options = pinned(), fetcher = keys(), toleranceSeconds?: number) {
  return verifyAwsSns({ raw: Buffer.from(JSON.stringify(message)), options, keys: fetcher, toleranceSeconds, nowSeconds: Math.floor(Date.now() / 1000) });
}

describe('aws-sns (X.509 certificate by URL)', () => {
  test.each(['1', '2'] as const)('a Notification signed with SignatureVersion %s: sns-validator and the gateway accept it', async (version) => {
    const message = signSns(notification(), aws.key, version);
    expect(await snsValidatorAccepts(message, aws.cert)).toBe(true);
    expect(await verify(message)).toEqual({
      ok: true,
      kind: 'Notification',
      deliveryId: '22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324',
      sender: TOPIC,
      keySource: 'pinned',
    });
    expect(host.accepted()).toBe(0);
  });

  test('a Notification without Subject signs without it', async () => {
    const { Subject: _none, ...bare } = notification();
    const message = signSns(bare, aws.key, '2');
    expect(await snsValidatorAccepts(message, aws.cert)).toBe(true);
    expect(await verify(message)).toMatchObject({ ok: true });
  });

  test('a null Subject is an absent one', async () => {
    const { Subject: _none, ...bare } = notification();
    const message = { ...signSns(bare, aws.key, '2'), Subject: null } as unknown as SnsBody;
    expect(await snsValidatorAccepts(message, aws.cert)).toBe(true);
    expect(await verify(message)).toMatchObject({ ok: true });
  });

  test('a SubscriptionConfirmation (Token and SubscribeURL signed) is accepted, kind SubscriptionConfirmation', async () => {
    const message = signSns(subscriptionConfirmation(), aws.key, '2');
    expect(await snsValidatorAccepts(message, aws.cert)).toBe(true);
    expect(await verify(message)).toMatchObject({ ok: true, kind: 'SubscriptionConfirmation', deliveryId: '165545c9-2a5c-472c-8df2-7ff2be2b3b1b' });
  });

  test("an UnsubscribeConfirmation signs Token and SubscribeURL as AWS documents (sns-validator 0.3.5 leaves Token out: AWS's docs win)", async () => {
    const message = signSns(unsubscribeConfirmation(), aws.key, '1');
    expect(await snsValidatorAccepts(message, aws.cert)).toBe(false);
    expect(await verify(message)).toMatchObject({ ok: true, kind: 'UnsubscribeConfirmation' });
  });

  test('the certificate is fetched from AWS (its local stand-in) when not pinned, then cached', async () => {
    host.route(CERT_ROUTE, (_req, res) => res.writeHead(200).end(aws.cert));
    const fetcher = keys();
    const message = signSns(notification(), aws.key, '2');
    expect(await verify(message, pinned({ certificates: undefined }), fetcher)).toMatchObject({ ok: true, keySource: 'fetched' });
    expect(await verify(message, pinned({ certificates: undefined }), fetcher)).toMatchObject({ ok: true, keySource: 'cache' });
    expect(host.requests).toEqual([CERT_ROUTE]);
  });

  test('the certificate host unreachable is key_unavailable (503, never 401)', async () => {
    const message = signSns(notification(), aws.key, '2');
    expect(await verify(message, pinned({ certificates: undefined }))).toEqual({ ok: false, reason: 'key_unavailable' });
    expect(await verify(message, pinned({ certificates: undefined }), keys({ enabled: false }))).toEqual({ ok: false, reason: 'key_unavailable' });
  });

  test('a valid message of another topic is sender_not_allowed (403)', async () => {
    const message = signSns({ ...notification(), TopicArn: 'arn:aws:sns:us-west-2:999999999999:TheirTopic' }, aws.key, '2');
    expect(await snsValidatorAccepts(message, aws.cert)).toBe(true);
    expect(await verify(message)).toEqual({ ok: false, reason: 'sender_not_allowed', sender: 'arn:aws:sns:us-west-2:999999999999:TheirTopic' });
  });

  test.each([
    ['an altered Message', (m: SnsBody) => ({ ...m, Message: 'Hello mallory!' })],
    ['an altered MessageId (a replay under a new id)', (m: SnsBody) => ({ ...m, MessageId: 'aaaaaaaa-fdea-4c2c-8f9d-bdfb0c7bf324' })],
    ['SignatureVersion 2 on an RSA-SHA1 signature', (m: SnsBody) => ({ ...m, SignatureVersion: '2' })],
  ])('%s is signature_invalid (sns-validator refuses it too)', async (_name, change) => {
    const message = change(signSns(notification(), aws.key, '1'));
    expect(await snsValidatorAccepts(message, aws.cert)).toBe(false);
    expect(await verify(message)).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  test('a pinned certificate of another key is signature_invalid', async () => {
    const other = makeSigningCertificate();
    const message = signSns(notification(), aws.key, '2');
    expect(await verify(message, pinned({ certificates: { [CERT_URL]: other.cert } }))).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  test.each([
    ['not JSON', 'hello'],
    ['another Type', JSON.stringify({ ...notification(), Type: 'Whatever' })],
    ['no Signature', JSON.stringify({ ...notification(), Signature: undefined })],
    ['SignatureVersion 3', JSON.stringify({ ...notification(), SignatureVersion: '3', Signature: 'AAAA' })],
    ['a Signature that is not base64', JSON.stringify({ ...notification(), Signature: '!!!' })],
    ['a Signature longer than any RSA key signs', JSON.stringify({ ...notification(), Signature: 'A'.repeat(1404) })],
    ['a number where a string is signed', JSON.stringify({ ...notification(), Signature: 'AAAA', Message: 5 })],
    ['a SubscriptionConfirmation without Token', JSON.stringify({ ...subscriptionConfirmation(), Signature: 'AAAA', Token: undefined })],
  ])('%s is signature_missing', async (_name, body) => {
    const result = await verifyAwsSns({ raw: Buffer.from(body), options: pinned(), keys: keys(), nowSeconds: 0 });
    expect(result).toEqual({ ok: false, reason: 'signature_missing' });
  });

  test('no tolerance by default (SNS keeps the first Timestamp on retries); one the trigger sets applies', async () => {
    const message = signSns(notification(), aws.key, '2');
    expect(await verify(message)).toMatchObject({ ok: true });
    expect(await verify(message, pinned(), keys(), 300)).toEqual({ ok: false, reason: 'timestamp_out_of_tolerance' });
    const fresh = signSns({ ...notification(), Timestamp: new Date().toISOString() }, aws.key, '2');
    expect(await verify(fresh, pinned(), keys(), 300)).toMatchObject({ ok: true });
  });

  test('a topic the trigger does not list, with an unpinned certificate, is signature_invalid before any fetch', async () => {
    host.route(CERT_ROUTE, (_req, res) => res.writeHead(200).end(aws.cert));
    const message = signSns({ ...notification(), TopicArn: 'arn:aws:sns:us-west-2:123456789012:OtherTopic' }, aws.key, '2');
    for (let i = 0; i < 3; i++) {
      expect(await verify(message, pinned({ certificates: undefined }))).toEqual({ ok: false, reason: 'signature_invalid' });
    }
    expect(host.requests).toEqual([]);
    expect(host.accepted()).toBe(0);
  });

  test("a topic the trigger does not list is still verified with a certificate already cached (the region's, fetched for a listed topic): valid is sender_not_allowed, nothing fetched again", async () => {
    host.route(CERT_ROUTE, (_req, res) => res.writeHead(200).end(aws.cert));
    const fetcher = keys();
    const options = pinned({ certificates: undefined });
    expect(await verify(signSns(notification(), aws.key, '2'), options, fetcher)).toMatchObject({ ok: true, keySource: 'fetched' });
    const other = 'arn:aws:sns:us-west-2:999999999999:TheirTopic';
    const message = signSns({ ...notification(), TopicArn: other }, aws.key, '2');
    expect(await snsValidatorAccepts(message, aws.cert)).toBe(true);
    expect(await verify(message, options, fetcher)).toEqual({ ok: false, reason: 'sender_not_allowed', sender: other });
    expect(await verify({ ...message, Message: 'Hello mallory!' }, options, fetcher)).toEqual({ ok: false, reason: 'signature_invalid' });
    expect(host.requests).toEqual([CERT_ROUTE]);
  });

  test("a certificate URL of another region than the topic's is signature_invalid before any fetch", async () => {
    host.route(CERT_ROUTE, (_req, res) => res.writeHead(200).end(aws.cert));
    const message = signSns({ ...notification(), TopicArn: 'arn:aws:sns:eu-west-1:123456789012:MyTopic' }, aws.key, '2');
    const options = pinned({ certificates: undefined, topicArns: ['arn:aws:sns:eu-west-1:123456789012:MyTopic'] });
    expect(await verify(message, options)).toEqual({ ok: false, reason: 'signature_invalid' });
    expect(host.accepted()).toBe(0);
  });

  describe('a SigningCertURL off the allow-list: key_url_not_allowed, nothing fetched', () => {
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
      ['a local listener', (port: number) => `https://127.0.0.1:${port}/cert.pem`],
      ['a look-alike host', () => 'https://sns.us-west-2.amazonaws.com.evil.example.com/cert.pem'],
      ['another host', () => 'https://evil.example.com/SimpleNotificationService-x.pem'],
      ['plain http', () => 'http://sns.us-west-2.amazonaws.com/SimpleNotificationService-x.pem'],
    ])('%s', async (_name, urlAt) => {
      const url = urlAt(port);
      const message = signSns({ ...notification(), SigningCertURL: url }, aws.key, '2');
      // The pinned map even names it: a URL off the list is refused before any key is looked up.
      const result = await verify(message, pinned({ certificates: { [url]: aws.cert } }));
      expect(result).toEqual({ ok: false, reason: 'key_url_not_allowed' });
      expect(connections).toBe(0);
      expect(host.accepted()).toBe(0);
    });
  });
});

describe('aws-sns autoConfirm: the SubscribeURL GET', () => {
  const confirmRoute = (message: SnsBody) => `sns.us-west-2.amazonaws.com ${message.SubscribeURL.slice('https://sns.us-west-2.amazonaws.com'.length)}`;

  test("a listed topic's ConfirmSubscription URL is fetched once", async () => {
    const message = subscriptionConfirmation();
    host.route(confirmRoute(message), (_req, res) => res.writeHead(200).end('<ConfirmSubscriptionResponse/>'));
    expect(await confirmSnsSubscription(Buffer.from(JSON.stringify(message)), [TOPIC], keys())).toEqual({ ok: true });
    expect(host.requests).toEqual([confirmRoute(message)]);
  });

  test('AWS not answering is key_unavailable', async () => {
    expect(await confirmSnsSubscription(Buffer.from(JSON.stringify(subscriptionConfirmation())), [TOPIC], keys())).toEqual({
      ok: false,
      reason: 'key_unavailable',
    });
  });

  test.each([
    ['another action', (url: string) => url.replace('ConfirmSubscription', 'Unsubscribe')],
    ['another region than the topic', (url: string) => url.replace('sns.us-west-2', 'sns.eu-west-1')],
    ['another topic in the URL', (url: string) => url.replace('MyTopic&', 'TheirTopic&')],
    ['another host', (url: string) => url.replace('sns.us-west-2.amazonaws.com', 'evil.example.com')],
    ['a port', (url: string) => url.replace('amazonaws.com/', 'amazonaws.com:8443/')],
  ])('a SubscribeURL with %s is invalid_handshake, nothing fetched', async (_name, change) => {
    const message = subscriptionConfirmation();
    const raw = Buffer.from(JSON.stringify({ ...message, SubscribeURL: change(message.SubscribeURL) }));
    expect(await confirmSnsSubscription(raw, [TOPIC], keys())).toEqual({ ok: false, reason: 'invalid_handshake' });
    expect(host.accepted()).toBe(0);
  });

  test('a topic the trigger does not list is invalid_handshake, nothing fetched', async () => {
    const raw = Buffer.from(JSON.stringify(subscriptionConfirmation()));
    expect(await confirmSnsSubscription(raw, ['arn:aws:sns:us-west-2:123456789012:Other'], keys())).toEqual({ ok: false, reason: 'invalid_handshake' });
    expect(host.accepted()).toBe(0);
  });
});
