/**
 * The aws-sns preset through HTTP (contract §10.1 D, E, F, H): messages signed as AWS signs
 * them, accepted by sns-validator first; certificates pinned or served by a local stand-in for
 * AWS (a throw-away CA, the fetcher's resolver and dial pointed at it): nothing leaves the machine.
 */
import request from 'supertest';
import { ADMIN_TOKEN, testApp } from '../helpers/app';
import { expectError, hookUrl } from '../helpers/http';
import { eventOf, registerTrigger, putTrigger, type TestApp } from '../helpers/presets';
import { makeCa, makeSigningCertificate, publicResolver, startKeyHost, type KeyHost, type TestCa } from '../unit/keys/key-host';
import { CERT_URL, notification, signSns, snsValidatorAccepts, subscriptionConfirmation, TOPIC, type SnsBody } from '../unit/families/sns-messages';

const OTHER_TOPIC = 'arn:aws:sns:us-west-2:123456789012:SomeoneElsesTopic';
const CERT_ROUTE = `sns.us-west-2.amazonaws.com ${new URL(CERT_URL).pathname}`;

let tls: TestCa;
let aws: { cert: string; key: string };
let host: KeyHost;
let t: TestApp;

beforeAll(() => {
  tls = makeCa();
  aws = makeSigningCertificate();
});
beforeEach(async () => {
  host = await startKeyHost(tls);
});
afterEach(() => host.close());

function app(env: Record<string, string> = {}) {
  // A hung key host is given up on after 1 s here (the product's bound is 5 s, src/keys/transport.ts).
  return testApp(env, { keyTransport: { resolver: publicResolver, dial: host.dial, ca: tls.ca, limits: { connectTimeoutMs: 1000, totalTimeoutMs: 1000, maxBodyBytes: 64 * 1024 } } });
}

const pinnedOptions = (extra: Record<string, unknown> = {}) => ({ topicArns: [TOPIC], certificates: { [CERT_URL]: aws.cert }, ...extra });

/** SNS posts its JSON as text/plain, with its message type in a header. */
function post(path: string, message: SnsBody | string) {
  const body = typeof message === 'string' ? message : JSON.stringify(message);
  const type = typeof message === 'string' ? 'Notification' : message.Type;
  return request(t.app).post(hookUrl(path)).set('Content-Type', 'text/plain; charset=UTF-8').set('x-amz-sns-message-type', type).send(body);
}

const withMessageId = (message: SnsBody, id: string) => ({ ...message, MessageId: id });

describe('aws-sns preset (contract §10.1 D)', () => {
  beforeEach(() => {
    t = app();
  });

  it('a Notification sns-validator accepts is published as JSON with kind, id and sender; a replay is 2xx, nothing published', async () => {
    await registerTrigger(t, 'sns', { name: 'aws-sns', options: pinnedOptions() });
    const message = signSns(notification(), aws.key, '2');
    expect(await snsValidatorAccepts(message, aws.cert)).toBe(true);
    const res = await post('sns', message);
    expect(res.status).toBe(200);
    expect(t.sink.records).toHaveLength(1);
    const event = eventOf(t.sink.records[0]);
    expect(event.data.provider).toEqual({
      name: 'aws-sns',
      kind: 'Notification',
      deliveryId: '22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324',
      verified: true,
      authenticates: 'body',
    });
    expect(event.data.input).toMatchObject({ Type: 'Notification', Message: 'Hello world!', TopicArn: TOPIC });
    expect(host.accepted()).toBe(0);

    const replay = await post('sns', message);
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(t.sink.records).toHaveLength(1);
  });

  it('one changed byte is 401 signature_invalid; no signature is 401 signature_missing; nothing published', async () => {
    await registerTrigger(t, 'sns', { name: 'aws-sns', options: pinnedOptions() });
    const body = JSON.stringify(signSns(notification(), aws.key, '2'));
    const changed = body.replace('Hello world!', 'Hello world?');
    expect(changed).not.toBe(body);
    expect(expectError(await post('sns', changed), 'UNAUTHORIZED').details).toEqual({ reason: 'signature_invalid' });
    // UnsubscribeURL is not among the signed keys (AWS's canonical string): changing it changes nothing signed.
    const { Signature: _gone, ...unsigned } = signSns(notification(), aws.key, '2');
    expect(expectError(await post('sns', unsigned as SnsBody), 'UNAUTHORIZED').details).toEqual({ reason: 'signature_missing' });
    expect(t.sink.records).toHaveLength(0);
  });

  it("a valid message of another topic is 403 sender_not_allowed, counted as a failed authentication, the topic in the delivery log", async () => {
    t = app({ AUTH_FAILURE_LIMIT: '2/60' });
    await registerTrigger(t, 'sns', { name: 'aws-sns', options: pinnedOptions() });
    const other = signSns({ ...notification(), TopicArn: OTHER_TOPIC }, aws.key, '2');
    expect(await snsValidatorAccepts(other, aws.cert)).toBe(true);
    const res = await post('sns', other);
    expect(expectError(res, 'FORBIDDEN').details).toEqual({ reason: 'sender_not_allowed' });
    expect(res.text).not.toContain(OTHER_TOPIC);
    const log = await request(t.admin).get('/admin/triggers/sns/deliveries').set({ Authorization: `Bearer ${ADMIN_TOKEN}` });
    expect(JSON.stringify(log.body)).toContain(OTHER_TOPIC);
    expect(log.body.data[0].diagnostics).toMatchObject({ sender: OTHER_TOPIC, keyUrlAllowed: true });
    await post('sns', other);
    // The third attempt from this address is throttled before its signature is looked at.
    expect(expectError(await post('sns', signSns(notification(), aws.key, '2')), 'RATE_LIMITED').details).toMatchObject({ reason: 'auth_throttled' });
    expect(t.sink.records).toHaveLength(0);
  });

  it('a SigningCertURL off the allow-list (a local listener) is 401 key_url_not_allowed and the gateway never connects', async () => {
    await registerTrigger(t, 'sns', { name: 'aws-sns', options: { topicArns: [TOPIC] } });
    for (const url of ['https://evil.example.com/cert.pem', 'https://127.0.0.1/cert.pem', 'https://sns.us-west-2.amazonaws.com:8443/x.pem', 'http://sns.us-west-2.amazonaws.com/x.pem']) {
      const message = signSns({ ...notification(), SigningCertURL: url }, aws.key, '2');
      const res = await post('sns', message);
      expect(expectError(res, 'UNAUTHORIZED').details).toEqual({ reason: 'key_url_not_allowed' });
    }
    expect(host.accepted()).toBe(0);
    expect(host.dialed).toEqual([]);
    expect(t.sink.records).toHaveLength(0);
    // The delivery log says the URL was not allowed, never the URL (nor its query).
    const log = await request(t.admin).get('/admin/triggers/sns/deliveries').set({ Authorization: `Bearer ${ADMIN_TOKEN}` });
    expect(log.body.data[0].diagnostics).toMatchObject({ keyUrlAllowed: false });
    expect(JSON.stringify(log.body)).not.toContain('evil.example.com');
    expect(JSON.stringify(log.body)).not.toContain('/cert.pem');
  });

  it('an unpinned certificate is fetched once from the allow-listed host (its local stand-in), then served from the cache', async () => {
    host.route(CERT_ROUTE, (_req, res) => res.writeHead(200).end(aws.cert));
    await registerTrigger(t, 'sns', { name: 'aws-sns', options: { topicArns: [TOPIC] } });
    expect((await post('sns', signSns(notification(), aws.key, '1'))).status).toBe(200);
    expect((await post('sns', signSns(withMessageId(notification(), 'second-message'), aws.key, '1'))).status).toBe(200);
    expect(host.requests).toEqual([CERT_ROUTE]);
    expect(t.sink.records).toHaveLength(2);
    const metrics = await t.deps.metrics.registry.getSingleMetricAsString('igw_provider_key_fetch_total');
    expect(metrics).toContain('igw_provider_key_fetch_total{preset="aws-sns",outcome="ok"} 1');
    expect(await t.deps.metrics.registry.getSingleMetricAsString('igw_provider_key_cache_hits_total')).toContain('igw_provider_key_cache_hits_total{preset="aws-sns"} 1');
  });

  it('KEY_FETCH=off with nothing pinned is 503 key_unavailable with Retry-After, nothing fetched or published', async () => {
    t = app({ KEY_FETCH: 'off' });
    host.route(CERT_ROUTE, (_req, res) => res.writeHead(200).end(aws.cert));
    await registerTrigger(t, 'sns', { name: 'aws-sns', options: { topicArns: [TOPIC] } });
    const res = await post('sns', signSns(notification(), aws.key, '2'));
    expect(expectError(res, 'SERVICE_UNAVAILABLE').details).toEqual({ reason: 'key_unavailable' });
    expect(res.headers['retry-after']).toBe('2');
    expect(host.accepted()).toBe(0);
    expect(t.sink.records).toHaveLength(0);
  });

  it("a certificate host that hangs is 503 key_unavailable with Retry-After: the trigger's quota is unspent, nothing published", async () => {
    t = app({ RATE_LIMIT_DEFAULT: '5/60' });
    host.route(CERT_ROUTE, () => undefined); // never answers
    await registerTrigger(t, 'sns', { name: 'aws-sns', options: { topicArns: [TOPIC] } });
    await registerTrigger(t, 'sns-pinned', { name: 'aws-sns', options: pinnedOptions() });
    const first = await post('sns-pinned', signSns(notification(), aws.key, '2'));
    expect(first.status).toBe(200);
    const remaining = Number(first.headers['x-ratelimit-remaining']);
    expect(remaining).toBeGreaterThan(0);

    const hung = await post('sns', signSns(withMessageId(notification(), 'hung'), aws.key, '2'));
    expect(expectError(hung, 'SERVICE_UNAVAILABLE').details).toEqual({ reason: 'key_unavailable' });
    expect(hung.headers['retry-after']).toBe('2');
    expect(hung.headers['x-ratelimit-remaining']).toBeUndefined();
    expect(t.sink.records).toHaveLength(1);

    const next = await post('sns-pinned', signSns(withMessageId(notification(), 'next'), aws.key, '2'));
    expect(next.status).toBe(200);
    // Both triggers share the workspace bucket: only the two good deliveries were charged.
    expect(Number(next.headers['x-ratelimit-remaining'])).toBe(remaining - 1);
  }, 20_000);
});

describe('aws-sns SubscriptionConfirmation (contract §10.1 D handshakes)', () => {
  beforeEach(() => {
    t = app();
  });

  it('autoConfirm false (default): published as kind SubscriptionConfirmation with its SubscribeURL, nothing fetched', async () => {
    await registerTrigger(t, 'sns', { name: 'aws-sns', options: pinnedOptions() });
    const message = signSns(subscriptionConfirmation(), aws.key, '1');
    expect(await snsValidatorAccepts(message, aws.cert)).toBe(true);
    const res = await post('sns', message);
    expect(res.status).toBe(200);
    const event = eventOf(t.sink.records[0]);
    expect(event.data.provider.kind).toBe('SubscriptionConfirmation');
    expect(event.data.input.SubscribeURL).toBe(message.SubscribeURL);
    expect(host.accepted()).toBe(0);
  });

  it('autoConfirm true: the gateway GETs the allow-listed SubscribeURL (its local stand-in), answers 200 and publishes nothing', async () => {
    const subscribe = new URL(subscriptionConfirmation().SubscribeURL);
    const route = `sns.us-west-2.amazonaws.com ${subscribe.pathname}${subscribe.search}`;
    host.route(route, (_req, res) => res.writeHead(200).end('<ConfirmSubscriptionResponse/>'));
    await registerTrigger(t, 'sns', { name: 'aws-sns', options: pinnedOptions({ autoConfirm: true }) });
    const res = await post('sns', signSns(subscriptionConfirmation(), aws.key, '2'));
    expect(res.status).toBe(200);
    expect(host.requests).toEqual([route]);
    expect(t.sink.records).toHaveLength(0);
  });

  it('autoConfirm true with a SubscribeURL off the allow-list (a local listener): 400 invalid_handshake, never connected', async () => {
    await registerTrigger(t, 'sns', { name: 'aws-sns', options: pinnedOptions({ autoConfirm: true }) });
    for (const url of [
      `https://evil.example.com/?Action=ConfirmSubscription&TopicArn=${TOPIC}`,
      `https://127.0.0.1/?Action=ConfirmSubscription&TopicArn=${TOPIC}`,
      `https://sns.us-west-2.amazonaws.com/?Action=Unsubscribe&TopicArn=${TOPIC}`,
    ]) {
      const res = await post('sns', signSns({ ...subscriptionConfirmation(), SubscribeURL: url }, aws.key, '2'));
      expect(expectError(res, 'BAD_REQUEST').details).toEqual({ reason: 'invalid_handshake' });
    }
    expect(host.accepted()).toBe(0);
    expect(t.sink.records).toHaveLength(0);
  });
});

describe('aws-sns trigger options (contract §10.1 B, D)', () => {
  beforeEach(() => {
    t = app();
  });

  it('takes no secrets, 1-20 topic ARNs, and pins certificates only for AWS certificate URLs', async () => {
    expect((await putTrigger(t, 'ok', { name: 'aws-sns', options: { topicArns: [TOPIC] } })).status).toBe(200);
    expect((await putTrigger(t, 'secret', { name: 'aws-sns', secrets: ['s'], options: { topicArns: [TOPIC] } })).status).toBe(400);
    expect((await putTrigger(t, 'none', { name: 'aws-sns', options: { topicArns: [] } })).status).toBe(400);
    expect((await putTrigger(t, 'many', { name: 'aws-sns', options: { topicArns: Array.from({ length: 21 }, (_, i) => `${TOPIC}${i}`) } })).status).toBe(400);
    expect((await putTrigger(t, 'evil', { name: 'aws-sns', options: { topicArns: [TOPIC], certificates: { 'https://evil.example.com/c.pem': aws.cert } } })).status).toBe(400);
    expect((await putTrigger(t, 'bad-pem', { name: 'aws-sns', options: { topicArns: [TOPIC], certificates: { [CERT_URL]: 'not a pem' } } })).status).toBe(400);
  });
});
