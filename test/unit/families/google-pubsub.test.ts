import { once } from 'node:events';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { OAuth2Client } from 'google-auth-library';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { KeyFetcher } from '../../../src/keys/key-fetcher';
import { verifyGooglePubsub, type GooglePubsubOptions } from '../../../src/providers/families/google-pubsub';
import { makeCa, publicResolver, startKeyHost, type KeyHost, type TestCa } from '../keys/key-host';
import { hs256, nowSeconds, rs256, rsaKey, unsigned, type RsaKey } from './jwt-keys';

// A push request body as Pub/Sub's documentation shows it.
const push = Buffer.from(
  JSON.stringify({
    message: {
      attributes: { eventType: 'OBJECT_FINALIZE', key: 'value' },
      data: 'SGVsbG8gQ2xvdWQgUHViL1N1YiEgSGVyZSBpcyBteSBtZXNzYWdlIQ==',
      messageId: '2070443601311540',
      message_id: '2070443601311540',
      publishTime: '2021-02-26T19:13:55.749Z',
      publish_time: '2021-02-26T19:13:55.749Z',
    },
    subscription: 'projects/myproject/subscriptions/mysubscription',
  }),
);

const AUDIENCE = 'https://hooks.example.com/t/pubsub';
const ACCOUNT = 'push-invoker@myproject.iam.gserviceaccount.com';

let google: RsaKey;
let tls: TestCa;
let host: KeyHost;

beforeAll(() => {
  google = rsaKey('1bd68a01f63a2b7ef8a5e1a3c1d0c2f6a83f4e42');
  tls = makeCa();
});
beforeEach(async () => {
  host = await startKeyHost(tls);
});
afterEach(() => host.close());

/** The claims of a Pub/Sub push OIDC token (Google's docs: aud, azp, email, email_verified, exp, iat, iss, sub). */
function claims(overrides: Record<string, unknown> = {}) {
  const iat = nowSeconds();
  return { aud: AUDIENCE, azp: '1234567890', email: ACCOUNT, email_verified: true, exp: iat + 3600, iat, iss: 'https://accounts.google.com', sub: '1234567890', ...overrides };
}

const pinned = () => ({ keys: [google.jwk] });
const options = (extra: Partial<GooglePubsubOptions> = {}): GooglePubsubOptions => ({
  audience: AUDIENCE,
  serviceAccountEmails: [ACCOUNT],
  jwks: pinned(),
  kindAttribute: 'eventType',
  ...extra,
});
const keys = (extra = {}) => new KeyFetcher({ enabled: true, resolver: publicResolver, dial: host.dial, ca: tls.ca, ...extra });

function verify(token: string | undefined, opts = options(), fetcher = keys()) {
  return verifyGooglePubsub({
    authorization: token === undefined ? undefined : `Bearer ${token}`,
    raw: push,
    options: opts,
    toleranceSeconds: 300,
    nowSeconds: nowSeconds(),
    keys: fetcher,
  });
}

/** google-auth-library's own check with the same public key: it must accept what the test signs. */
async function googleAccepts(token: string) {
  const ticket = await new OAuth2Client().verifySignedJwtWithCertsAsync(token, { [google.kid]: google.publicPem }, AUDIENCE, [
    'accounts.google.com',
    'https://accounts.google.com',
  ]);
  return ticket.getPayload()?.email;
}

function serveGoogleJwks(...jwks: unknown[]) {
  host.route('www.googleapis.com /oauth2/v3/certs', (_req, res) =>
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'public, max-age=20000' }).end(JSON.stringify({ keys: jwks })),
  );
}

describe('google-pubsub (OIDC push)', () => {
  test('a push token google-auth-library accepts is accepted with the pinned JWKS: sender, kind, id; nothing fetched', async () => {
    const token = await rs256(google, claims());
    expect(await googleAccepts(token)).toBe(ACCOUNT);
    expect(await verify(token)).toEqual({
      ok: true,
      keySource: 'pinned',
      kid: google.kid,
      sender: ACCOUNT,
      kind: 'OBJECT_FINALIZE',
      deliveryId: '2070443601311540',
    });
    expect(host.accepted()).toBe(0);
  });

  test('without a pinned JWKS the key is fetched from Google (here its local stand-in), then cached', async () => {
    serveGoogleJwks(google.jwk);
    const fetcher = keys();
    const token = await rs256(google, claims());
    expect(await verify(token, options({ jwks: undefined }), fetcher)).toMatchObject({ ok: true, keySource: 'fetched' });
    expect(await verify(token, options({ jwks: undefined }), fetcher)).toMatchObject({ ok: true, keySource: 'cache' });
    expect(host.requests).toEqual(['www.googleapis.com /oauth2/v3/certs']);
  });

  test("Google's keys unreachable is key_unavailable (503), as is KEY_FETCH=off without a pinned set", async () => {
    const token = await rs256(google, claims());
    expect(await verify(token, options({ jwks: undefined }))).toEqual({ ok: false, reason: 'key_unavailable' });
    expect(await verify(token, options({ jwks: undefined }), keys({ enabled: false }))).toEqual({ ok: false, reason: 'key_unavailable' });
  });

  test('kind is `message` without a kindAttribute', async () => {
    expect(await verify(await rs256(google, claims()), options({ kindAttribute: undefined }))).toMatchObject({ ok: true, kind: 'message' });
  });

  test('issuer accounts.google.com without the scheme is accepted too', async () => {
    const token = await rs256(google, claims({ iss: 'accounts.google.com' }));
    expect(await googleAccepts(token)).toBe(ACCOUNT);
    expect(await verify(token)).toMatchObject({ ok: true });
  });

  test('a valid token of another service account is sender_not_allowed (403)', async () => {
    const token = await rs256(google, claims({ email: 'someone-else@other-project.iam.gserviceaccount.com' }));
    expect(await googleAccepts(token)).toBe('someone-else@other-project.iam.gserviceaccount.com');
    expect(await verify(token)).toEqual({ ok: false, reason: 'sender_not_allowed', sender: 'someone-else@other-project.iam.gserviceaccount.com' });
  });

  test.each([
    ['email_verified false', { email_verified: false }],
    ['email_verified as a string', { email_verified: 'true' }],
    ['no email', { email: undefined }],
  ])('%s is sender_not_allowed', async (_name, overrides) => {
    expect(await verify(await rs256(google, claims(overrides)))).toMatchObject({ ok: false, reason: 'sender_not_allowed' });
  });

  test.each([
    ['another audience', { aud: 'https://elsewhere.example.com/' }],
    ['another issuer', { iss: 'https://evil.example.com' }],
    ['no exp', { exp: undefined }],
  ])('%s is signature_invalid', async (_name, overrides) => {
    expect(await verify(await rs256(google, claims(overrides)))).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  test('an expired token is timestamp_out_of_tolerance (past the 300 s skew google-auth-library allows too)', async () => {
    const iat = nowSeconds() - 4000;
    const token = await rs256(google, claims({ iat, exp: iat + 3600 - 301 }));
    await expect(googleAccepts(token)).rejects.toThrow(/too late/i);
    expect(await verify(token)).toEqual({ ok: false, reason: 'timestamp_out_of_tolerance' });
  });

  test('a token issued in the future beyond the tolerance is timestamp_out_of_tolerance', async () => {
    const iat = nowSeconds() + 400;
    expect(await verify(await rs256(google, claims({ iat, exp: iat + 3600 })))).toEqual({ ok: false, reason: 'timestamp_out_of_tolerance' });
  });

  test('no token is signature_missing', async () => {
    expect(await verify(undefined)).toEqual({ ok: false, reason: 'signature_missing' });
  });
});

describe('google-pubsub: tokens that must never pass', () => {
  test('a token signed by another key under the same kid is signature_invalid', async () => {
    const impostor = rsaKey(google.kid);
    expect(await verify(await rs256(impostor, claims()))).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  test('alg none is signature_invalid', async () => {
    expect(await verify(unsigned(claims(), { kid: google.kid }))).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  test("HS256 with Google's public key as the HMAC secret (algorithm confusion) is signature_invalid", async () => {
    const token = await hs256(claims(), google.publicPem, { kid: google.kid });
    expect(await verify(token)).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  test('ES256 is not RS256: signature_invalid', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'ec', alg: 'ES256' };
    const token = await new SignJWT(claims()).setProtectedHeader({ alg: 'ES256', kid: 'ec' }).sign(privateKey);
    expect(await verify(token, options({ jwks: { keys: [google.jwk, jwk] } }))).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  test('an unknown kid is signature_invalid (pinned set: nothing fetched)', async () => {
    const other = rsaKey('unknown-kid');
    expect(await verify(await rs256(other, claims()))).toEqual({ ok: false, reason: 'signature_invalid' });
    expect(await verify(await rs256(google, claims(), { kid: undefined }))).toEqual({ ok: false, reason: 'signature_invalid' });
    expect(host.accepted()).toBe(0);
  });

  describe('key material or key URLs in the token header are never fetched nor trusted', () => {
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

    test.each(['jku', 'x5u'])('%s naming a local listener: never connected, the forged token refused', async (parameter) => {
      const attacker = rsaKey('attacker');
      serveGoogleJwks(google.jwk);
      const token = await rs256(attacker, claims(), { [parameter]: `https://127.0.0.1:${port}/keys` });
      expect(await verify(token, options({ jwks: undefined }))).toEqual({ ok: false, reason: 'signature_invalid' });
      expect(connections).toBe(0);
      expect(host.requests).toEqual(['www.googleapis.com /oauth2/v3/certs']);
    });

    test('an embedded jwk of the signer is not used', async () => {
      const attacker = rsaKey(google.kid);
      const token = await rs256(attacker, claims(), { jwk: { kty: 'RSA', n: attacker.jwk.n, e: attacker.jwk.e } });
      expect(await verify(token)).toEqual({ ok: false, reason: 'signature_invalid' });
    });

    test('an x5c chain of the signer is not used', async () => {
      const attacker = rsaKey(google.kid);
      const token = await rs256(attacker, claims(), { x5c: [Buffer.from('not google').toString('base64')] });
      expect(await verify(token)).toEqual({ ok: false, reason: 'signature_invalid' });
    });
  });
});
