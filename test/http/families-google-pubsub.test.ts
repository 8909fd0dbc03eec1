/**
 * The google-pubsub preset through HTTP (contract §10.1 D, E, F): push requests with an OIDC
 * token signed as Google signs them, accepted by google-auth-library first; Google's keys pinned
 * or served by a local stand-in (a throw-away CA): nothing leaves the machine.
 */
import { OAuth2Client } from 'google-auth-library';
import request from 'supertest';
import { ADMIN_TOKEN, testApp } from '../helpers/app';
import { expectError, hookUrl } from '../helpers/http';
import { eventOf, PUBLIC_BASE_URL, publicUrl, putTrigger, registerTrigger, type TestApp } from '../helpers/presets';
import { makeCa, publicResolver, startKeyHost, type KeyHost, type TestCa } from '../unit/keys/key-host';
import { nowSeconds, rs256, rsaKey, type RsaKey } from '../unit/families/jwt-keys';

// A push request body as Pub/Sub's documentation shows it.
const PUSH = JSON.stringify({
  message: {
    attributes: { eventType: 'OBJECT_FINALIZE', key: 'value' },
    data: 'SGVsbG8gQ2xvdWQgUHViL1N1YiEgSGVyZSBpcyBteSBtZXNzYWdlIQ==',
    messageId: '2070443601311540',
    message_id: '2070443601311540',
    publishTime: '2021-02-26T19:13:55.749Z',
    publish_time: '2021-02-26T19:13:55.749Z',
  },
  subscription: 'projects/myproject/subscriptions/mysubscription',
});
const ACCOUNT = 'push-invoker@myproject.iam.gserviceaccount.com';
const OTHER_ACCOUNT = 'someone-else@otherproject.iam.gserviceaccount.com';
const JWKS_ROUTE = 'www.googleapis.com /oauth2/v3/certs';

let google: RsaKey;
let tls: TestCa;
let host: KeyHost;
let t: TestApp;

beforeAll(() => {
  google = rsaKey('1bd68a01f63a2b7ef8a5e1a3c1d0c2f6a83f4e42');
  tls = makeCa();
});
beforeEach(async () => {
  host = await startKeyHost(tls);
  t = app();
});
afterEach(() => host.close());

function app(env: Record<string, string> = {}) {
  return testApp(
    { PUBLIC_BASE_URL, ...env },
    { keyTransport: { resolver: publicResolver, dial: host.dial, ca: tls.ca, limits: { connectTimeoutMs: 1000, totalTimeoutMs: 1000, maxBodyBytes: 64 * 1024 } } },
  );
}

/** The claims of a Pub/Sub push token (Google's docs: aud, azp, email, email_verified, exp, iat, iss, sub). */
function claims(path: string, overrides: Record<string, unknown> = {}) {
  const iat = nowSeconds();
  return { aud: publicUrl(path), azp: '1234567890', email: ACCOUNT, email_verified: true, exp: iat + 3600, iat, iss: 'https://accounts.google.com', sub: '1234567890', ...overrides };
}

async function googleAccepts(token: string, audience: string): Promise<boolean> {
  try {
    await new OAuth2Client().verifySignedJwtWithCertsAsync(token, { [google.kid]: google.publicPem }, audience, ['accounts.google.com', 'https://accounts.google.com']);
    return true;
  } catch {
    return false;
  }
}

const pinned = () => ({ keys: [google.jwk] });
const push = (path: string, token: string | undefined, body = PUSH) => {
  const req = request(t.app).post(hookUrl(path)).set('Content-Type', 'application/json');
  return (token === undefined ? req : req.set('Authorization', `Bearer ${token}`)).send(body);
};

describe('google-pubsub preset (contract §10.1 D)', () => {
  it('a push google-auth-library accepts is published, authenticates "sender", kind from kindAttribute; a replay is 2xx, nothing published', async () => {
    await registerTrigger(t, 'pubsub', { name: 'google-pubsub', options: { serviceAccountEmails: [ACCOUNT], jwks: pinned(), kindAttribute: 'eventType' } });
    const token = await rs256(google, claims('pubsub'));
    expect(await googleAccepts(token, publicUrl('pubsub'))).toBe(true);
    const res = await push('pubsub', token);
    expect(res.status).toBe(200);
    const event = eventOf(t.sink.records[0]);
    expect(event.data.provider).toEqual({ name: 'google-pubsub', kind: 'OBJECT_FINALIZE', deliveryId: '2070443601311540', verified: true, authenticates: 'sender' });
    expect(JSON.stringify(t.sink.records)).not.toContain(token);
    expect(event.data.headers).not.toHaveProperty('authorization');

    const replay = await push('pubsub', await rs256(google, claims('pubsub', { iat: nowSeconds() - 1 })));
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(t.sink.records).toHaveLength(1);
    expect(host.accepted()).toBe(0);
  });

  it('one changed byte of the token is 401 signature_invalid; no token is 401 signature_missing; another audience is 401', async () => {
    await registerTrigger(t, 'pubsub', { name: 'google-pubsub', options: { serviceAccountEmails: [ACCOUNT], jwks: pinned() } });
    const token = await rs256(google, claims('pubsub'));
    const [head, payload, signature] = token.split('.');
    const changed = `${head}.${payload}.${signature.slice(0, 10)}${signature[10] === 'A' ? 'B' : 'A'}${signature.slice(11)}`;
    expect(expectError(await push('pubsub', changed), 'UNAUTHORIZED').details).toEqual({ reason: 'signature_invalid' });
    expect(expectError(await push('pubsub', undefined), 'UNAUTHORIZED').details).toEqual({ reason: 'signature_missing' });
    const elsewhere = await rs256(google, claims('pubsub', { aud: `${PUBLIC_BASE_URL}/other` }));
    expect(expectError(await push('pubsub', elsewhere), 'UNAUTHORIZED').details).toEqual({ reason: 'signature_invalid' });
    expect(t.sink.records).toHaveLength(0);
  });

  it('a valid token of another service account is 403 sender_not_allowed; the email only in the delivery log', async () => {
    await registerTrigger(t, 'pubsub', { name: 'google-pubsub', options: { serviceAccountEmails: [ACCOUNT], jwks: pinned() } });
    const token = await rs256(google, claims('pubsub', { email: OTHER_ACCOUNT }));
    expect(await googleAccepts(token, publicUrl('pubsub'))).toBe(true);
    const res = await push('pubsub', token);
    expect(expectError(res, 'FORBIDDEN').details).toEqual({ reason: 'sender_not_allowed' });
    expect(res.text).not.toContain(OTHER_ACCOUNT);
    const log = await request(t.admin).get('/admin/triggers/pubsub/deliveries').set({ Authorization: `Bearer ${ADMIN_TOKEN}` });
    expect(log.body.data[0].diagnostics).toMatchObject({ sender: OTHER_ACCOUNT });
    expect(JSON.stringify(log.body)).not.toContain(token);
    expect(t.sink.records).toHaveLength(0);
  });

  it('a jku, x5u, jwk or x5c in the token header (pointing at a local listener) is never fetched nor used', async () => {
    await registerTrigger(t, 'pubsub', { name: 'google-pubsub', options: { serviceAccountEmails: [ACCOUNT] } });
    const attacker = rsaKey('attacker-kid');
    host.route('evil.example.com /jwks', (_req, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ keys: [attacker.jwk] })));
    const headers = [
      { jku: 'https://evil.example.com/jwks' },
      { x5u: 'https://evil.example.com/cert.pem' },
      { jwk: attacker.jwk },
      { x5c: ['MIIBszCCAVmgAwIBAgIUZmFrZQ=='] },
    ];
    host.route(JWKS_ROUTE, (_req, res) => res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'max-age=3600' }).end(JSON.stringify({ keys: [google.jwk] })));
    for (const header of headers) {
      const token = await rs256(attacker, claims('pubsub'), header);
      expect(expectError(await push('pubsub', token), 'UNAUTHORIZED').details).toEqual({ reason: 'signature_invalid' });
    }
    // Only Google's own key set was asked for (once, then cached); the header URLs never.
    expect(host.requests.every((line) => line === JWKS_ROUTE)).toBe(true);
    expect(host.requests.filter((line) => line.startsWith('evil.example.com'))).toEqual([]);
    expect(t.sink.records).toHaveLength(0);
  });

  it("Google's keys fetched from the allow-listed host (its local stand-in) when none are pinned, then from the cache", async () => {
    host.route(JWKS_ROUTE, (_req, res) => res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'max-age=3600' }).end(JSON.stringify({ keys: [google.jwk] })));
    await registerTrigger(t, 'pubsub', { name: 'google-pubsub', options: { serviceAccountEmails: [ACCOUNT] } });
    expect((await push('pubsub', await rs256(google, claims('pubsub')))).status).toBe(200);
    const second = JSON.parse(PUSH);
    second.message.messageId = '2070443601311541';
    expect((await push('pubsub', await rs256(google, claims('pubsub')), JSON.stringify(second))).status).toBe(200);
    expect(host.requests).toEqual([JWKS_ROUTE]);
    expect(t.sink.records).toHaveLength(2);
  });

  it('KEY_FETCH=off with nothing pinned is 503 key_unavailable with Retry-After; nothing fetched or published', async () => {
    t = app({ KEY_FETCH: 'off' });
    await registerTrigger(t, 'pubsub', { name: 'google-pubsub', options: { serviceAccountEmails: [ACCOUNT] } });
    const res = await push('pubsub', await rs256(google, claims('pubsub')));
    expect(expectError(res, 'SERVICE_UNAVAILABLE').details).toEqual({ reason: 'key_unavailable' });
    expect(res.headers['retry-after']).toBe('2');
    expect(host.accepted()).toBe(0);
    expect(t.sink.records).toHaveLength(0);
  });

  it('jwksUrl other than Google\'s is 400 at PUT naming it; secrets are refused; 1-10 emails', async () => {
    const base = { serviceAccountEmails: [ACCOUNT] };
    expect((await putTrigger(t, 'a', { name: 'google-pubsub', options: { ...base, jwksUrl: 'https://www.googleapis.com/oauth2/v3/certs' } })).status).toBe(200);
    const evil = await putTrigger(t, 'b', { name: 'google-pubsub', options: { ...base, jwksUrl: 'https://evil.example.com/jwks' } });
    expect(evil.status).toBe(400);
    expect(JSON.stringify(evil.body)).toContain('jwksUrl');
    expect((await putTrigger(t, 'c', { name: 'google-pubsub', secrets: ['x'], options: base })).status).toBe(400);
    expect((await putTrigger(t, 'd', { name: 'google-pubsub', options: { serviceAccountEmails: [] } })).status).toBe(400);
  });

  it('without PUBLIC_BASE_URL the audience must be set: the default (the public URL) would come from the Host header', async () => {
    t = testApp();
    const res = await putTrigger(t, 'e', { name: 'google-pubsub', options: { serviceAccountEmails: [ACCOUNT] } });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain('PUBLIC_BASE_URL');
    expect((await putTrigger(t, 'f', { name: 'google-pubsub', options: { serviceAccountEmails: [ACCOUNT], audience: 'https://hooks.example.com/x' } })).status).toBe(200);
  });
});
