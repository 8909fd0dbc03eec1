import { KeyFetcher } from '../../../src/keys/key-fetcher';
import { BOT_FRAMEWORK_ISSUER, verifyBotFramework, type BotFrameworkOptions } from '../../../src/providers/families/bot-framework';
import { makeCa, publicResolver, startKeyHost, type KeyHost, type TestCa } from '../keys/key-host';
import { nowSeconds, rs256, rsaKey, type RsaKey } from './jwt-keys';
import { refusesForgedTokens } from './oidc-cases';

const APP_ID = '7f1e7bd1-3b1e-4f4a-9c4e-2f8b8c3d1a11';
const SERVICE_URL = 'https://smba.trafficmanager.net/teams/';
// A message activity as the Bot Framework REST API reference shows one (trimmed), from Teams.
const activity = (overrides: Record<string, unknown> = {}) =>
  Buffer.from(
    JSON.stringify({
      type: 'message',
      id: 'bf3cc9a2f5de...',
      timestamp: '2016-10-19T20:17:52.2891902Z',
      serviceUrl: SERVICE_URL,
      channelId: 'msteams',
      from: { id: '1234abcd', name: 'user1' },
      conversation: { id: 'abcd1234', name: 'conversation1' },
      recipient: { id: '12345678', name: 'bot' },
      text: 'Haircut on Saturday',
      ...overrides,
    }),
  );
const ROUTE = 'login.botframework.com /v1/.well-known/keys';

let bot: RsaKey;
let tls: TestCa;
let host: KeyHost;
beforeAll(() => {
  bot = rsaKey('GvnPApfWMdLRi8PDmisFn7bprKg');
  tls = makeCa();
});
beforeEach(async () => {
  host = await startKeyHost(tls);
});
afterEach(() => host.close());

/** The JWKS entry as login.botframework.com publishes it: the channels the key endorses. */
const endorsedJwk = (endorsements = ['msteams', 'webchat', 'skype']) => ({ ...bot.jwk, endorsements });
const claims = (overrides: Record<string, unknown> = {}) => {
  const iat = nowSeconds();
  return { serviceUrl: SERVICE_URL, nbf: iat, exp: iat + 3600, iss: BOT_FRAMEWORK_ISSUER, aud: APP_ID, ...overrides };
};
const options = (extra: Partial<BotFrameworkOptions> = {}): BotFrameworkOptions => ({ appId: APP_ID, jwks: { keys: [endorsedJwk()] }, ...extra });
const keys = (extra = {}) => new KeyFetcher({ enabled: true, resolver: publicResolver, dial: host.dial, ca: tls.ca, ...extra });
const verify = (token: string | undefined, opts = options(), fetcher = keys(), raw = activity()) =>
  verifyBotFramework({ authorization: token === undefined ? undefined : `Bearer ${token}`, raw, options: opts, toleranceSeconds: 300, nowSeconds: nowSeconds(), keys: fetcher });
const serve = (...jwks: unknown[]) => host.route(ROUTE, (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: jwks })));

describe('bot-framework (Bot Connector bearer token, sender only)', () => {
  test('a token for the bot, key endorsing the channel, is accepted: kind the activity type, id the activity id', async () => {
    expect(await verify(await rs256(bot, claims()))).toEqual({ ok: true, keySource: 'pinned', kid: bot.kid, sender: APP_ID, kind: 'message', deliveryId: 'bf3cc9a2f5de...' });
    expect(host.accepted()).toBe(0);
  });

  test('without a pinned JWKS the key is fetched from login.botframework.com (its local stand-in), then cached', async () => {
    serve(endorsedJwk());
    const fetcher = keys();
    const token = await rs256(bot, claims());
    expect(await verify(token, options({ jwks: undefined }), fetcher)).toMatchObject({ ok: true, keySource: 'fetched' });
    expect(await verify(token, options({ jwks: undefined }), fetcher)).toMatchObject({ ok: true, keySource: 'cache' });
    expect(host.requests).toEqual([ROUTE]);
  });

  test('a valid token for another bot is sender_not_allowed (403)', async () => {
    expect(await verify(await rs256(bot, claims({ aud: 'another-bot-app-id' })))).toEqual({ ok: false, reason: 'sender_not_allowed', sender: 'another-bot-app-id' });
  });

  test("a key that does not endorse the activity's channel is signature_invalid, fetched or pinned", async () => {
    const token = await rs256(bot, claims());
    expect(await verify(token, options({ jwks: { keys: [endorsedJwk(['skype'])] } }))).toEqual({ ok: false, reason: 'signature_invalid' });
    expect(await verify(token, options({ jwks: { keys: [bot.jwk] } }))).toEqual({ ok: false, reason: 'signature_invalid' });
    expect(await verify(token, options(), keys(), activity({ channelId: 'slack' }))).toEqual({ ok: false, reason: 'signature_invalid' });
    serve(endorsedJwk(['skype']));
    expect(await verify(token, options({ jwks: undefined }))).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  test("a token whose serviceUrl is not the activity's is signature_invalid", async () => {
    expect(await verify(await rs256(bot, claims()), options(), keys(), activity({ serviceUrl: 'https://evil.example.com/' }))).toEqual({ ok: false, reason: 'signature_invalid' });
    expect(await verify(await rs256(bot, claims({ serviceUrl: undefined })))).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  test.each([
    ['another issuer (any Microsoft identity token)', { iss: 'https://sts.windows.net/72f988bf-86f1-41af-91ab-2d7cd011db47/' }],
    ['no exp', { exp: undefined }],
  ])('%s is signature_invalid', async (_name, overrides) => {
    expect(await verify(await rs256(bot, claims(overrides)))).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  test('an expired token is timestamp_out_of_tolerance; no token is signature_missing', async () => {
    expect(await verify(await rs256(bot, claims({ exp: nowSeconds() - 301 })))).toEqual({ ok: false, reason: 'timestamp_out_of_tolerance' });
    expect(await verify(undefined)).toEqual({ ok: false, reason: 'signature_missing' });
  });

  refusesForgedTokens({
    key: () => bot,
    claims,
    verifyPinned: (token) => verify(token),
    verifyFetched: (token) => verify(token, options({ jwks: undefined })),
    serveKeys: () => serve(endorsedJwk()),
    host: () => host,
    route: ROUTE,
  });
});
