import { OAuth2Client } from 'google-auth-library';
import { allowedKeyUrl } from '../../../src/keys/allow-list';
import { KeyFetcher } from '../../../src/keys/key-fetcher';
import { GOOGLE_CHAT_ISSUER, GOOGLE_CHAT_KEYS_URL, verifyGoogleChat, type GoogleChatOptions } from '../../../src/providers/families/google-chat';
import { makeCa, publicResolver, startKeyHost, type KeyHost, type TestCa } from '../keys/key-host';
import { nowSeconds, rs256, rsaKey, type RsaKey } from './jwt-keys';
import { refusesForgedTokens } from './oidc-cases';

// A Chat interaction event as Google Chat's "Receive and respond to interaction events" shows one (trimmed).
const event = Buffer.from(
  JSON.stringify({
    type: 'MESSAGE',
    eventTime: '2017-03-02T19:02:59.910959Z',
    space: { name: 'spaces/AAAAAAAAAAA', displayName: 'Chuck Norris Discussion Room', type: 'ROOM' },
    message: { name: 'spaces/AAAAAAAAAAA/messages/CCCCCCCCCCC', text: '@Chuck Norris fact', sender: { name: 'users/12345678901234567890', type: 'HUMAN' } },
    user: { name: 'users/12345678901234567890', displayName: 'Chris Corgi', type: 'HUMAN' },
  }),
);
const PROJECT = '1234567890';
const ROUTE = 'www.googleapis.com /service_accounts/v1/jwk/chat@system.gserviceaccount.com';

let chat: RsaKey;
let tls: TestCa;
let host: KeyHost;
beforeAll(() => {
  chat = rsaKey('7e3b3d1c0a9f2a3c8c1f4b2d9e6a5f0b1c2d3e4f');
  tls = makeCa();
});
beforeEach(async () => {
  host = await startKeyHost(tls);
});
afterEach(() => host.close());

const claims = (overrides: Record<string, unknown> = {}) => {
  const iat = nowSeconds();
  return { aud: PROJECT, iss: GOOGLE_CHAT_ISSUER, iat, exp: iat + 3600, ...overrides };
};
const options = (extra: Partial<GoogleChatOptions> = {}): GoogleChatOptions => ({ projectNumber: PROJECT, jwks: { keys: [chat.jwk] }, ...extra });
const keys = (extra = {}) => new KeyFetcher({ enabled: true, resolver: publicResolver, dial: host.dial, ca: tls.ca, ...extra });
const verify = (token: string | undefined, opts = options(), fetcher = keys()) =>
  verifyGoogleChat({ authorization: token === undefined ? undefined : `Bearer ${token}`, raw: event, options: opts, toleranceSeconds: 300, nowSeconds: nowSeconds(), keys: fetcher });
const serve = (...jwks: unknown[]) => host.route(ROUTE, (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: jwks })));

/** Google's sample check for Chat apps: google-auth-library with the account's certificates, audience the project number. */
async function googleAccepts(token: string, audience = PROJECT) {
  const ticket = await new OAuth2Client().verifySignedJwtWithCertsAsync(token, { [chat.kid]: chat.publicPem }, audience, [GOOGLE_CHAT_ISSUER]);
  return ticket.getPayload()?.aud;
}

describe('google-chat (bearer token of chat@system.gserviceaccount.com, sender only)', () => {
  test('the JWKS URL is on the allow-list, and only it', () => {
    expect(allowedKeyUrl('google-chat', GOOGLE_CHAT_KEYS_URL)?.href).toBe(GOOGLE_CHAT_KEYS_URL);
    expect(allowedKeyUrl('google-chat', 'https://www.googleapis.com/service_accounts/v1/jwk/attacker@evil.iam.gserviceaccount.com')).toBeUndefined();
    expect(allowedKeyUrl('google-chat', 'https://www.googleapis.com/oauth2/v3/certs')).toBeUndefined();
  });

  test('a token google-auth-library accepts is accepted with the pinned JWKS: kind the event type; nothing fetched', async () => {
    const token = await rs256(chat, claims());
    expect(await googleAccepts(token)).toBe(PROJECT);
    expect(await verify(token)).toEqual({ ok: true, keySource: 'pinned', kid: chat.kid, sender: GOOGLE_CHAT_ISSUER, kind: 'MESSAGE' });
    expect(host.accepted()).toBe(0);
  });

  test("without a pinned JWKS the key is fetched from the account's JWKS (its local stand-in), then cached", async () => {
    serve(chat.jwk);
    const fetcher = keys();
    const token = await rs256(chat, claims());
    expect(await verify(token, options({ jwks: undefined }), fetcher)).toMatchObject({ ok: true, keySource: 'fetched' });
    expect(await verify(token, options({ jwks: undefined }), fetcher)).toMatchObject({ ok: true, keySource: 'cache' });
    expect(host.requests).toEqual([ROUTE]);
  });

  test('a valid token for another project is sender_not_allowed (403)', async () => {
    const token = await rs256(chat, claims({ aud: '9876543210' }));
    expect(await googleAccepts(token, '9876543210')).toBe('9876543210');
    expect(await verify(token)).toEqual({ ok: false, reason: 'sender_not_allowed', sender: '9876543210' });
  });

  test.each([
    ['another issuer (a Google ID token of any account)', { iss: 'https://accounts.google.com' }],
    ['no exp', { exp: undefined }],
  ])('%s is signature_invalid', async (_name, overrides) => {
    expect(await verify(await rs256(chat, claims(overrides)))).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  test('an expired token is timestamp_out_of_tolerance', async () => {
    const iat = nowSeconds() - 4000;
    expect(await verify(await rs256(chat, claims({ iat, exp: iat + 3600 - 301 })))).toEqual({ ok: false, reason: 'timestamp_out_of_tolerance' });
  });

  test('Google unreachable is key_unavailable; no token is signature_missing', async () => {
    expect(await verify(await rs256(chat, claims()), options({ jwks: undefined }))).toEqual({ ok: false, reason: 'key_unavailable' });
    expect(await verify(undefined)).toEqual({ ok: false, reason: 'signature_missing' });
  });

  refusesForgedTokens({
    key: () => chat,
    claims,
    verifyPinned: (token) => verify(token),
    verifyFetched: (token) => verify(token, options({ jwks: undefined })),
    serveKeys: () => serve(chat.jwk),
    host: () => host,
    route: ROUTE,
  });
});
