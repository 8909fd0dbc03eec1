import { X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { KeyFetcher, type KeyFetcherOptions, type KeyFetchOutcome } from '../../../src/keys/key-fetcher';
import { waitUntil } from '../../helpers/wait';
import { makeCa, makeSigningCertificate, PUBLIC_ADDRESS, publicResolver, startKeyHost, type KeyHost, type TestCa } from './key-host';

const GOOGLE = 'https://www.googleapis.com/oauth2/v3/certs';
const GOOGLE_ROUTE = 'www.googleapis.com /oauth2/v3/certs';
const SNS_CERT = 'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-0123456789abcdef0123456789abcdef.pem';
const SNS_ROUTE = 'sns.us-east-1.amazonaws.com /SimpleNotificationService-0123456789abcdef0123456789abcdef.pem';
const HOUR = 3_600_000;

let tls: TestCa;
let signing: { cert: string; key: string };
let host: KeyHost;

beforeAll(() => {
  tls = makeCa();
  signing = makeSigningCertificate();
});
beforeEach(async () => {
  host = await startKeyHost(tls);
});
afterEach(() => host.close());

function jwks(...kids: string[]) {
  return JSON.stringify({ keys: kids.map((kid) => ({ kty: 'RSA', kid, alg: 'RS256', use: 'sig', n: 'AQAB', e: 'AQAB' })) });
}

function serveJwks(body: () => string, cacheControl = 'public, max-age=3600') {
  host.route(GOOGLE_ROUTE, (_req, res) => res.writeHead(200, { 'content-type': 'application/json', 'cache-control': cacheControl }).end(body()));
}

function recorder() {
  const fetched: Array<[string, KeyFetchOutcome]> = [];
  const hits: string[] = [];
  return { fetched, hits, metrics: { fetched: (p: string, o: KeyFetchOutcome) => fetched.push([p, o]), cacheHit: (p: string) => hits.push(p) } };
}

function fetcher(extra: Partial<KeyFetcherOptions> = {}) {
  return new KeyFetcher({ enabled: true, resolver: publicResolver, dial: host.dial, ca: tls.ca, ...extra });
}

const google = { preset: 'google-pubsub', source: 'google-oidc' as const, url: GOOGLE };

describe('key fetcher: what it fetches', () => {
  test('a JWKS is fetched over verified TLS from the checked address, then served from the cache', async () => {
    serveJwks(() => jwks('k1'));
    const { metrics, fetched, hits } = recorder();
    const keys = fetcher({ metrics });
    const first = await keys.jwks({ ...google, kid: 'k1' });
    const second = await keys.jwks({ ...google, kid: 'k1' });
    expect(first).toEqual({ ok: true, keySource: 'fetched', value: JSON.parse(jwks('k1')) });
    expect(second).toMatchObject({ ok: true, keySource: 'cache' });
    expect(host.requests).toEqual([GOOGLE_ROUTE]);
    expect(host.dialed).toEqual([PUBLIC_ADDRESS]);
    expect(fetched).toEqual([['google-pubsub', 'ok']]);
    expect(hits).toEqual(['google-pubsub']);
  });

  test('a certificate is fetched and parsed', async () => {
    host.route(SNS_ROUTE, (_req, res) => res.writeHead(200).end(signing.cert));
    const result = await fetcher().certificate({ preset: 'aws-sns', source: 'aws-sns-certificate', url: SNS_CERT });
    expect(result.ok && result.value.fingerprint256).toBe(new X509Certificate(signing.cert).fingerprint256);
  });

  test('a server the system roots do not trust is key_unavailable', async () => {
    serveJwks(() => jwks('k1'));
    const { metrics, fetched } = recorder();
    const result = await fetcher({ ca: undefined, metrics }).jwks(google);
    expect(result).toEqual({ ok: false, reason: 'key_unavailable' });
    expect(fetched).toEqual([['google-pubsub', 'error']]);
    expect(host.requests).toEqual([]);
  });

  test('a certificate that does not name the host is key_unavailable (desk.zoho.com is not in the stand-in certificate)', async () => {
    host.route('desk.zoho.com /.well-known/jwks.json', (_req, res) => res.writeHead(200).end(jwks('z')));
    const result = await fetcher().jwks({ preset: 'zoho-desk', source: 'zoho-desk', url: 'https://desk.zoho.com/.well-known/jwks.json' });
    expect(result).toEqual({ ok: false, reason: 'key_unavailable' });
    expect(host.requests).toEqual([]);
  });

  test('SNS SubscribeURL is confirmed with one GET', async () => {
    const url = 'https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=arn%3Aaws%3Asns%3Aus-east-1%3A1%3At&Token=tok';
    host.route(`sns.us-east-1.amazonaws.com ${url.slice(url.indexOf('/', 8))}`, (_req, res) => res.writeHead(200).end('<ConfirmSubscriptionResponse/>'));
    expect(await fetcher().confirmSubscription({ preset: 'aws-sns', url })).toEqual({ ok: true });
    expect(host.requests).toHaveLength(1);
  });

  test("Plaid's key API is a POST of JSON, cached under the caller's key", async () => {
    const received: string[] = [];
    host.route('sandbox.plaid.com /webhook_verification_key/get', (req, res, body) => {
      received.push(`${req.method} ${req.headers['content-type']} ${body.toString()}`);
      const { key_id } = JSON.parse(body.toString()) as { key_id: string };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ key: { kid: key_id, kty: 'EC' } }));
    });
    const time = { now: Date.now() };
    const keys = fetcher({ now: () => time.now });
    const plaid = (kid: string) =>
      keys.postJson({
        preset: 'plaid', source: 'plaid', url: 'https://sandbox.plaid.com/webhook_verification_key/get', json: { key_id: kid }, cacheKey: kid, ttlMs: HOUR,
      });
    expect(await plaid('k')).toEqual({ ok: true, keySource: 'fetched', value: { key: { kid: 'k', kty: 'EC' } } });
    expect(await plaid('k')).toMatchObject({ keySource: 'cache' });
    expect(await plaid('j')).toEqual({ ok: true, keySource: 'fetched', value: { key: { kid: 'j', kty: 'EC' } } });
    time.now += HOUR;
    expect(await plaid('k')).toMatchObject({ keySource: 'fetched' });
    expect(received).toEqual([
      'POST application/json {"key_id":"k"}',
      'POST application/json {"key_id":"j"}',
      'POST application/json {"key_id":"k"}',
    ]);
  });
});

describe('key fetcher: what it never does', () => {
  const offList = [
    'http://www.googleapis.com/oauth2/v3/certs',
    'https://www.googleapis.com:8443/oauth2/v3/certs',
    'https://user@www.googleapis.com/oauth2/v3/certs',
    'https://evil.example.com/oauth2/v3/certs',
    `https://${PUBLIC_ADDRESS}/oauth2/v3/certs`,
    'https://www.googleapis.com/oauth2/v3/certs/../../redirect',
  ];

  test.each(offList)('an off-list URL (%s) is key_url_not_allowed and no connection is opened', async (url) => {
    serveJwks(() => jwks('k1'));
    let resolved = 0;
    const { metrics, fetched } = recorder();
    const keys = fetcher({ metrics, resolver: async () => (resolved++, [{ address: PUBLIC_ADDRESS, family: 4 }]) });
    expect(await keys.jwks({ ...google, url })).toEqual({ ok: false, reason: 'key_url_not_allowed' });
    expect(await keys.certificate({ preset: 'aws-sns', source: 'aws-sns-certificate', url })).toEqual({ ok: false, reason: 'key_url_not_allowed' });
    expect(resolved).toBe(0);
    expect(host.accepted()).toBe(0);
    expect(fetched.map(([, outcome]) => outcome)).toEqual(['not_allowed', 'not_allowed']);
  });

  const inside = [['127.0.0.1'], ['10.0.0.7'], ['169.254.169.254'], ['100.64.1.1'], ['::1'], ['::ffff:127.0.0.1'], ['fd00::1'], ['52.94.236.248', '192.168.0.1']];

  test.each(inside.map((addresses) => [addresses.join(' and '), addresses] as const))(
    'a host resolving to %s is key_unavailable and never connected to',
    async (_label, addresses) => {
    serveJwks(() => jwks('k1'));
    const { metrics, fetched } = recorder();
    const resolver = async () => addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    expect(await fetcher({ resolver, metrics }).jwks(google)).toEqual({ ok: false, reason: 'key_unavailable' });
    expect(host.accepted()).toBe(0);
    expect(fetched).toEqual([['google-pubsub', 'address_not_public']]);
    },
  );

  test('the name is resolved once and the connection goes to that address (no rebinding between check and connect)', async () => {
    serveJwks(() => jwks('k1'));
    const answers = [PUBLIC_ADDRESS, '127.0.0.1'];
    let calls = 0;
    const resolver = async () => [{ address: answers[Math.min(calls++, 1)], family: 4 }];
    expect(await fetcher({ resolver }).jwks(google)).toMatchObject({ ok: true });
    expect(calls).toBe(1);
    expect(host.dialed).toEqual([PUBLIC_ADDRESS]);
  });

  test('a redirect is not followed', async () => {
    host.route(GOOGLE_ROUTE, (_req, res) => res.writeHead(302, { location: 'https://www.googleapis.com/oauth2/v3/certs2' }).end());
    host.route('www.googleapis.com /oauth2/v3/certs2', (_req, res) => res.writeHead(200).end(jwks('k1')));
    const { metrics, fetched } = recorder();
    expect(await fetcher({ metrics }).jwks(google)).toEqual({ ok: false, reason: 'key_unavailable' });
    expect(host.requests).toEqual([GOOGLE_ROUTE]);
    expect(fetched).toEqual([['google-pubsub', 'status']]);
  });

  test.each([
    ['declared', true],
    ['chunked', false],
  ])('a body over 64 KiB (%s length) is key_unavailable', async (_name, declared) => {
    const big = JSON.stringify({ keys: [{ kty: 'oct', k: 'x'.repeat(64 * 1024) }] });
    host.route(GOOGLE_ROUTE, (_req, res) => {
      if (declared) res.writeHead(200, { 'content-length': Buffer.byteLength(big) }).end(big);
      else {
        res.writeHead(200);
        res.write(big.slice(0, 40_000));
        res.end(big.slice(40_000));
      }
    });
    const { metrics, fetched } = recorder();
    expect(await fetcher({ metrics }).jwks(google)).toEqual({ ok: false, reason: 'key_unavailable' });
    expect(fetched).toEqual([['google-pubsub', 'too_large']]);
  });

  test('a host that never answers is key_unavailable once the total time is spent (lowered here)', async () => {
    host.route(GOOGLE_ROUTE, () => undefined);
    const { metrics, fetched } = recorder();
    const limits = { connectTimeoutMs: 2000, totalTimeoutMs: 200, maxBodyBytes: 65536 };
    expect(await fetcher({ metrics, limits }).jwks(google)).toEqual({ ok: false, reason: 'key_unavailable' });
    expect(fetched).toEqual([['google-pubsub', 'timeout']]);
  });

  test('a host that accepts but never completes TLS is key_unavailable after the connect time (lowered here)', async () => {
    const silent = createServer(() => undefined);
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    const { port } = silent.address() as AddressInfo;
    const limits = { connectTimeoutMs: 100, totalTimeoutMs: 30_000, maxBodyBytes: 65536 };
    const { metrics, fetched } = recorder();
    const result = await fetcher({ limits, metrics, dial: () => ({ host: '127.0.0.1', port }) }).jwks(google);
    silent.close();
    expect(result).toEqual({ ok: false, reason: 'key_unavailable' });
    expect(fetched).toEqual([['google-pubsub', 'timeout']]);
  });

  test('a resolver that never answers is key_unavailable after the connect time (lowered here)', async () => {
    const limits = { connectTimeoutMs: 100, totalTimeoutMs: 5000, maxBodyBytes: 65536 };
    const resolver = () => new Promise<never>(() => undefined);
    expect(await fetcher({ resolver, limits }).jwks(google)).toEqual({ ok: false, reason: 'key_unavailable' });
    expect(host.accepted()).toBe(0);
  });

  test('the time spent resolving counts toward the total: a resolution that used it all opens no connection (lowered here)', async () => {
    serveJwks(() => jwks('k1'));
    const limits = { connectTimeoutMs: 5000, totalTimeoutMs: 300, maxBodyBytes: 65536 };
    // Answers after the total has run out (twice it: timers of one length could fire in either order).
    let resolved: Promise<unknown> = Promise.resolve();
    const resolver = () => (resolved = new Promise<Array<{ address: string; family: number }>>((resolve) => setTimeout(resolve, 600, [{ address: PUBLIC_ADDRESS, family: 4 }])));
    const { metrics, fetched } = recorder();
    expect(await fetcher({ resolver, limits, metrics }).jwks(google)).toEqual({ ok: false, reason: 'key_unavailable' });
    expect(fetched).toEqual([['google-pubsub', 'timeout']]);
    await resolved; // the late answer arrives: it must open no connection either
    await new Promise((resolve) => setImmediate(resolve));
    expect(host.dialed).toEqual([]);
  });

  test('KEY_FETCH=off: nothing is fetched, a miss is key_unavailable; an off-list URL is still key_url_not_allowed', async () => {
    serveJwks(() => jwks('k1'));
    const { metrics, fetched } = recorder();
    const keys = fetcher({ enabled: false, metrics });
    expect(await keys.jwks(google)).toEqual({ ok: false, reason: 'key_unavailable' });
    expect(await keys.jwks({ ...google, url: 'https://evil.example.com/k' })).toEqual({ ok: false, reason: 'key_url_not_allowed' });
    expect(host.accepted()).toBe(0);
    expect(fetched.map(([, outcome]) => outcome)).toEqual(['disabled', 'not_allowed']);
  });

  test('a body that is not a key set is key_unavailable', async () => {
    host.route(GOOGLE_ROUTE, (_req, res) => res.writeHead(200).end('<html>'));
    const { metrics, fetched } = recorder();
    expect(await fetcher({ metrics }).jwks(google)).toEqual({ ok: false, reason: 'key_unavailable' });
    expect(fetched).toEqual([['google-pubsub', 'invalid']]);
  });
});

describe('key fetcher: cache', () => {
  function clock(start = Date.now()) {
    let now = start;
    return { now: () => now, advance: (ms: number) => (now += ms) };
  }

  test('concurrent misses share one fetch', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    host.route(GOOGLE_ROUTE, (_req, res) => void gate.then(() => res.writeHead(200).end(jwks('k1'))));
    const keys = fetcher();
    const all = Promise.all(Array.from({ length: 20 }, () => keys.jwks({ ...google, kid: 'k1' })));
    await waitUntil(() => host.requests.length === 1, 'the shared request at the stand-in');
    release();
    const results = await all;
    expect(results.every((result) => result.ok)).toBe(true);
    expect(host.requests).toHaveLength(1);
  });

  test('distinct misses of one source open at most 4 connections at once; the rest are key_unavailable (busy)', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    host.route('sandbox.plaid.com /webhook_verification_key/get', (_req, res) => void gate.then(() => res.writeHead(200).end('{"key":{}}')));
    const { metrics, fetched } = recorder();
    const keys = fetcher({ metrics });
    const url = 'https://sandbox.plaid.com/webhook_verification_key/get';
    const all = Promise.all(
      Array.from({ length: 10 }, (_, i) => keys.postJson({ preset: 'plaid', source: 'plaid', url, json: { key_id: `forged-${i}` }, cacheKey: `forged-${i}`, ttlMs: HOUR })),
    );
    await waitUntil(() => host.requests.length === 4, 'four requests at the stand-in');
    release();
    const results = await all;
    expect(results.filter((result) => result.ok)).toHaveLength(4);
    expect(fetched.filter(([, outcome]) => outcome === 'busy')).toHaveLength(6);
    expect(host.accepted()).toBe(4);
  });

  test.each([
    ['max-age=60', 5 * 60_000],
    ['public, max-age=19800, must-revalidate', 19800_000],
    ['max-age=9999999', 24 * HOUR],
    ['no-store', 5 * 60_000],
  ])('a JWKS with Cache-Control %s is kept %d ms', async (cacheControl, ttl) => {
    serveJwks(() => jwks('k1'), cacheControl);
    const time = clock();
    const keys = fetcher({ now: time.now });
    await keys.jwks(google);
    time.advance(ttl - 1);
    expect(await keys.jwks(google)).toMatchObject({ keySource: 'cache' });
    time.advance(1);
    expect(await keys.jwks(google)).toMatchObject({ keySource: 'fetched' });
    expect(host.requests).toHaveLength(2);
  });

  test('a certificate is kept 24 h at most, and never past its notAfter', async () => {
    host.route(SNS_ROUTE, (_req, res) => res.writeHead(200).end(signing.cert));
    const sns = { preset: 'aws-sns', source: 'aws-sns-certificate' as const, url: SNS_CERT };
    const time = clock();
    const keys = fetcher({ now: time.now });
    await keys.certificate(sns);
    time.advance(24 * HOUR - 1);
    expect(await keys.certificate(sns)).toMatchObject({ keySource: 'cache' });
    time.advance(1);
    expect(await keys.certificate(sns)).toMatchObject({ keySource: 'fetched' });

    const notAfter = Date.parse(new X509Certificate(signing.cert).validTo);
    const late = clock(notAfter - HOUR);
    const lateKeys = fetcher({ now: late.now });
    expect(await lateKeys.certificate(sns)).toMatchObject({ keySource: 'fetched' });
    late.advance(HOUR - 1);
    expect(await lateKeys.certificate(sns)).toMatchObject({ keySource: 'cache' });
    late.advance(1);
    // Expired now: fetched again, and the same (expired) certificate is not used.
    expect(await lateKeys.certificate(sns)).toEqual({ ok: false, reason: 'key_unavailable' });
    expect(host.requests).toHaveLength(4);
  });

  test('an unknown kid refreshes the set at most once a minute per source', async () => {
    let served = jwks('old');
    serveJwks(() => served);
    const time = clock();
    const keys = fetcher({ now: time.now });
    await keys.jwks({ ...google, kid: 'old' });
    served = jwks('old', 'new');
    for (let i = 0; i < 5; i++) expect(await keys.jwks({ ...google, kid: `forged-${i}` })).toMatchObject({ keySource: 'cache' });
    expect(host.requests).toHaveLength(1);
    time.advance(60_000);
    const refreshed = await keys.jwks({ ...google, kid: 'new' });
    expect(refreshed).toMatchObject({ ok: true, keySource: 'fetched' });
    expect(await keys.jwks({ ...google, kid: 'forged' })).toMatchObject({ keySource: 'cache' });
    expect(host.requests).toHaveLength(2);
  });

  test('after a failure the source is left alone for 2 s (the Retry-After given to the sender)', async () => {
    let up = false;
    host.route(GOOGLE_ROUTE, (_req, res) => (up ? res.writeHead(200).end(jwks('k1')) : res.writeHead(500).end()));
    const time = clock();
    const { metrics, fetched } = recorder();
    const keys = fetcher({ now: time.now, metrics });
    expect(await keys.jwks(google)).toEqual({ ok: false, reason: 'key_unavailable' });
    up = true;
    expect(await keys.jwks(google)).toEqual({ ok: false, reason: 'key_unavailable' });
    expect(host.requests).toHaveLength(1);
    time.advance(2000);
    expect(await keys.jwks(google)).toMatchObject({ ok: true, keySource: 'fetched' });
    expect(fetched.map(([, outcome]) => outcome)).toEqual(['status', 'backoff', 'ok']);
  });

  test('the cache holds a bounded number of entries (oldest used dropped first)', async () => {
    serveJwks(() => jwks('k1'));
    const keys = fetcher({ maxEntries: 2 });
    const zoho = (tld: string) => ({ preset: 'zoho-desk', source: 'zoho-desk' as const, url: `https://desk.zoho.${tld}/.well-known/jwks.json` });
    for (const tld of ['eu', 'in']) host.route(`desk.zoho.${tld} /.well-known/jwks.json`, (_req, res) => res.writeHead(200).end(jwks('z')));
    await keys.jwks(google);
    await keys.jwks(zoho('eu'));
    await keys.jwks(google); // google is now the most recent
    await keys.jwks(zoho('in')); // drops zoho.eu
    expect(await keys.jwks(google)).toMatchObject({ keySource: 'cache' });
    expect(await keys.jwks(zoho('eu'))).toMatchObject({ keySource: 'fetched' });
    expect(host.requests).toHaveLength(4);
  });
});
