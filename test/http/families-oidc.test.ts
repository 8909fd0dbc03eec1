/**
 * The sender-only OIDC presets through HTTP (contract §10.1 D, E, F): zoho-desk, graph-rich,
 * bot-framework and google-chat. Tokens are signed as each platform's docs say (Google Chat's
 * accepted by google-auth-library first; the others ship no Node verifier outside their
 * frameworks); keys pinned, or served by a local stand-in for the platform (a throw-away CA):
 * nothing leaves the machine.
 */
import { OAuth2Client } from 'google-auth-library';
import request from 'supertest';
import { ADMIN_TOKEN, testApp } from '../helpers/app';
import { expectError, hookUrl } from '../helpers/http';
import { eventOf, putTrigger, registerTrigger, type TestApp } from '../helpers/presets';
import { BOT_FRAMEWORK_ISSUER } from '../../src/providers/families/bot-framework';
import { GOOGLE_CHAT_ISSUER } from '../../src/providers/families/google-chat';
import { GRAPH_CHANGE_PUBLISHER_APP_ID } from '../../src/providers/families/graph-rich';
import { makeCa, publicResolver, startKeyHost, type KeyHost, type TestCa } from '../unit/keys/key-host';
import { nowSeconds, rs256, rsaKey, type RsaKey } from '../unit/families/jwt-keys';

let t: TestApp;
let tls: TestCa;
let host: KeyHost;
beforeAll(() => {
  tls = makeCa();
});
beforeEach(async () => {
  host = await startKeyHost(tls);
  t = app();
});
afterEach(() => host.close());

function app(env: Record<string, string> = {}) {
  return testApp(env, { keyTransport: { resolver: publicResolver, dial: host.dial, ca: tls.ca, limits: { connectTimeoutMs: 1000, totalTimeoutMs: 1000, maxBodyBytes: 64 * 1024 } } });
}

/** What one request of the platform is made of: its body and headers, given its token. */
interface Sent {
  body: string;
  headers: Record<string, string>;
}

interface OidcPreset {
  name: string;
  key: () => RsaKey;
  /** The platform's key set route on the stand-in ("host path"). */
  route: string;
  options: (jwks?: unknown) => Record<string, unknown>;
  claims: (overrides?: Record<string, unknown>) => Record<string, unknown>;
  send: (token: string | undefined) => Sent;
  /** Claims of a valid token of another tenant, app, org or project. */
  otherSender: Record<string, unknown>;
  /** Another tenant also shows in the body (Graph's tenantId): the body for that token. */
  otherSenderSend?: (token: string) => Sent;
  published: Record<string, unknown>;
  /** The official verifier, where one ships for Node. */
  officialAccepts?: (token: string) => Promise<boolean>;
  /** The catalogue's hosts for the preset (contract §10.G). */
  fetches: string[];
  /** A platform's retry re-sends the same bytes (graph-rich: the token is in the body); the others send a new token. */
  retrySameBytes?: boolean;
}

// Zoho Desk: an array of events as its webhook guide names the fields (values illustrative).
const ZOHO_ORG = '2389290';
const ZOHO_WEBHOOK = '1892000000427001';
const ZOHO_EVENTS = JSON.stringify([{ payload: { id: '1892000000093003', subject: 'Real Time analysis Report', status: 'Open' }, eventTime: '1565616423451', eventType: 'Ticket_Add', orgId: ZOHO_ORG }]);

// Graph: a rich notification as Microsoft's "change notifications that include resource data" shows one (trimmed).
const GRAPH_APP = '8ed6d3c0-5a0b-4c8e-9f1a-2b3c4d5e6f70';
const GRAPH_TENANT = '84bd8158-6d4d-4958-8b9f-9d6445542f95';
const OTHER_TENANT = '11111111-2222-3333-4444-555555555555';
const graphCollection = (token: string | undefined, tenantId = GRAPH_TENANT) =>
  JSON.stringify({
    ...(token !== undefined && { validationTokens: [token] }),
    value: [
      {
        subscriptionId: '76222963-cc7b-42d2-882d-8aaa69cb2ba3',
        changeType: 'created',
        subscriptionExpirationDateTime: '2016-03-19T22:11:09.952Z',
        resource: "teams('d29828b8-c04d-4e2a-b2f6-07da6982f0f0')/channels('19:f127a8c55ad949d1a238464d22f0f99e@thread.skype')/messages('1565045424600')",
        resourceData: { id: '1565293727947', '@odata.type': '#Microsoft.Graph.ChatMessage' },
        encryptedContent: { data: '{encrypted data}', dataSignature: '<HMAC-SHA256>', dataKey: '{encrypted symmetric key}', encryptionCertificateId: 'MySelfSignedCert/DDC9651A-D7BC-4D74-86BC-A8923584B0AB', encryptionCertificateThumbprint: '07293748CC064953A3052FB978C735FB89E61C3D' },
        tenantId,
      },
    ],
  });

// Bot Framework: a message activity as the Bot Framework REST reference shows one (trimmed), from Teams.
const BOT_APP = '7f1e7bd1-3b1e-4f4a-9c4e-2f8b8c3d1a11';
const SERVICE_URL = 'https://smba.trafficmanager.net/teams/';
const ACTIVITY = JSON.stringify({
  type: 'message',
  id: 'bf3cc9a2f5de...',
  timestamp: '2016-10-19T20:17:52.2891902Z',
  serviceUrl: SERVICE_URL,
  channelId: 'msteams',
  from: { id: '1234abcd', name: 'user1' },
  conversation: { id: 'abcd1234', name: 'conversation1' },
  recipient: { id: '12345678', name: 'bot' },
  text: 'Haircut on Saturday',
});

// Google Chat: an interaction event as "Receive and respond to interaction events" shows one (trimmed).
const CHAT_PROJECT = '1234567890';
const CHAT_EVENT = JSON.stringify({
  type: 'MESSAGE',
  eventTime: '2017-03-02T19:02:59.910959Z',
  space: { name: 'spaces/AAAAAAAAAAA', displayName: 'Chuck Norris Discussion Room', type: 'ROOM' },
  message: { name: 'spaces/AAAAAAAAAAA/messages/CCCCCCCCCCC', text: '@Chuck Norris fact', sender: { name: 'users/12345678901234567890', type: 'HUMAN' } },
  user: { name: 'users/12345678901234567890', displayName: 'Chris Corgi', type: 'HUMAN' },
});

const keysOf: Record<string, RsaKey> = {};
beforeAll(() => {
  for (const name of ['zoho-desk', 'graph-rich', 'bot-framework', 'google-chat']) keysOf[name] = rsaKey(`${name}-kid-1`);
});
const bearer = (token: string | undefined): Record<string, string> => (token === undefined ? {} : { Authorization: `Bearer ${token}` });
const window = (seconds = 3600) => {
  const iat = nowSeconds();
  return { iat, exp: iat + seconds };
};

const PRESETS: OidcPreset[] = [
  {
    name: 'zoho-desk',
    key: () => keysOf['zoho-desk'],
    route: 'desk.zoho.eu /.well-known/jwks.json',
    options: (jwks) => ({ orgId: ZOHO_ORG, webhookId: ZOHO_WEBHOOK, deskHost: 'desk.zoho.eu', ...(jwks !== undefined && { jwks }) }),
    claims: (o = {}) => ({ iss: `orgId:${ZOHO_ORG}`, aud: `webhookId:${ZOHO_WEBHOOK}`, ...window(300), ...o }),
    send: (token) => ({ body: ZOHO_EVENTS, headers: token === undefined ? {} : ({ 'X-ZDesk-JWT': token } as Record<string, string>) }),
    otherSender: { iss: 'orgId:7000000' },
    published: { kind: 'Ticket_Add' },
    fetches: ['desk.zoho.com', 'desk.zoho.eu', 'desk.zoho.in', 'desk.zoho.com.au', 'desk.zoho.jp', 'desk.zoho.com.cn'],
  },
  {
    name: 'graph-rich',
    key: () => keysOf['graph-rich'],
    route: 'login.microsoftonline.com /common/discovery/v2.0/keys',
    options: (jwks) => ({ appId: GRAPH_APP, tenantIds: [GRAPH_TENANT], ...(jwks !== undefined && { jwks }) }),
    claims: (o = {}) => ({ aud: GRAPH_APP, iss: `https://sts.windows.net/${GRAPH_TENANT}/`, azp: GRAPH_CHANGE_PUBLISHER_APP_ID, azpacr: '2', tid: GRAPH_TENANT, ver: '1.0', ...window(), ...o }),
    send: (token) => ({ body: graphCollection(token), headers: {} }),
    otherSender: { iss: `https://sts.windows.net/${OTHER_TENANT}/`, tid: OTHER_TENANT },
    otherSenderSend: (token) => ({ body: graphCollection(token, OTHER_TENANT), headers: {} }),
    published: { kind: 'created' },
    fetches: ['login.microsoftonline.com'],
    retrySameBytes: true,
  },
  {
    name: 'bot-framework',
    key: () => keysOf['bot-framework'],
    route: 'login.botframework.com /v1/.well-known/keys',
    options: (jwks) => ({ appId: BOT_APP, ...(jwks !== undefined && { jwks }) }),
    claims: (o = {}) => ({ serviceUrl: SERVICE_URL, iss: BOT_FRAMEWORK_ISSUER, aud: BOT_APP, nbf: nowSeconds(), ...window(), ...o }),
    send: (token) => ({ body: ACTIVITY, headers: bearer(token) }),
    otherSender: { aud: '00000000-0000-0000-0000-0000000000bb' },
    published: { kind: 'message', deliveryId: 'bf3cc9a2f5de...' },
    fetches: ['login.botframework.com'],
  },
  {
    name: 'google-chat',
    key: () => keysOf['google-chat'],
    route: 'www.googleapis.com /service_accounts/v1/jwk/chat@system.gserviceaccount.com',
    options: (jwks) => ({ projectNumber: CHAT_PROJECT, ...(jwks !== undefined && { jwks }) }),
    claims: (o = {}) => ({ aud: CHAT_PROJECT, iss: GOOGLE_CHAT_ISSUER, ...window(), ...o }),
    send: (token) => ({ body: CHAT_EVENT, headers: bearer(token) }),
    otherSender: { aud: '9876543210' },
    published: { kind: 'MESSAGE' },
    fetches: ['www.googleapis.com'],
    // Google's sample check for Chat apps: google-auth-library with the account's certificates.
    officialAccepts: async (token) => {
      const key = keysOf['google-chat'];
      const audience = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).aud;
      try {
        await new OAuth2Client().verifySignedJwtWithCertsAsync(token, { [key.kid]: key.publicPem }, audience, [GOOGLE_CHAT_ISSUER]);
        return true;
      } catch {
        return false;
      }
    },
  },
];

/** The platform's key as its JWKS lists it (Bot Framework's keys name the channels they endorse). */
const jwkOf = (preset: OidcPreset) => (preset.name === 'bot-framework' ? { ...preset.key().jwk, endorsements: ['msteams', 'webchat'] } : preset.key().jwk);
const pinned = (preset: OidcPreset) => ({ keys: [jwkOf(preset)] });
const post = (path: string, sent: Sent) => request(t.app).post(hookUrl(path)).set('Content-Type', 'application/json').set(sent.headers).send(sent.body);
const changedByte = (token: string) => {
  const [head, payload, signature] = token.split('.');
  return `${head}.${payload}.${signature.slice(0, 10)}${signature[10] === 'A' ? 'B' : 'A'}${signature.slice(11)}`;
};

describe.each(PRESETS.map((preset) => [preset.name, preset] as const))('%s preset (contract §10.1 D, sender only)', (name, preset) => {
  it('a genuine delivery is published (authenticates "sender"); a retry is 2xx, nothing published; nothing fetched with pinned keys', async () => {
    await registerTrigger(t, name, { name, options: preset.options(pinned(preset)) });
    const token = await rs256(preset.key(), preset.claims());
    if (preset.officialAccepts) expect(await preset.officialAccepts(token)).toBe(true);
    const res = await post(name, preset.send(token));
    expect(res.status).toBe(200);
    expect(eventOf(t.sink.records[0]).data.provider).toMatchObject({ name, verified: true, authenticates: 'sender', ...preset.published });
    expect(JSON.stringify(t.sink.records)).not.toContain(token.split('.')[2]);

    const again = preset.retrySameBytes ? token : await rs256(preset.key(), preset.claims({ iat: nowSeconds() - 1 }));
    const replay = await post(name, preset.send(again));
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(t.sink.records).toHaveLength(1);
    expect(host.accepted()).toBe(0);
  });

  it('one changed byte of the token is 401 signature_invalid; no token is 401 signature_missing', async () => {
    await registerTrigger(t, name, { name, options: preset.options(pinned(preset)) });
    const token = await rs256(preset.key(), preset.claims());
    expect(expectError(await post(name, preset.send(changedByte(token))), 'UNAUTHORIZED').details).toEqual({ reason: 'signature_invalid' });
    expect(expectError(await post(name, preset.send(undefined)), 'UNAUTHORIZED').details).toEqual({ reason: 'signature_missing' });
    expect(t.sink.records).toHaveLength(0);
  });

  it('a valid token of another tenant, app, org or project is 403 sender_not_allowed, counted in the delivery log, never the token', async () => {
    await registerTrigger(t, name, { name, options: preset.options(pinned(preset)) });
    const token = await rs256(preset.key(), preset.claims(preset.otherSender));
    if (preset.officialAccepts) expect(await preset.officialAccepts(token)).toBe(true);
    const res = await post(name, (preset.otherSenderSend ?? preset.send)(token));
    expect(expectError(res, 'FORBIDDEN').details).toEqual({ reason: 'sender_not_allowed' });
    const log = await request(t.admin).get(`/admin/triggers/${name}/deliveries`).set({ Authorization: `Bearer ${ADMIN_TOKEN}` });
    expect(log.body.data[0]).toMatchObject({ status: 403 });
    expect(JSON.stringify(log.body)).not.toContain(token);
    expect(t.sink.records).toHaveLength(0);
  });

  it("without pinned keys the platform's key set is fetched from its allow-listed host (a local stand-in), then cached", async () => {
    host.route(preset.route, (_req, res) => res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'max-age=3600' }).end(JSON.stringify(pinned(preset))));
    await registerTrigger(t, name, { name, options: preset.options() });
    expect((await post(name, preset.send(await rs256(preset.key(), preset.claims())))).status).toBe(200);
    expect((await post(name, preset.send(await rs256(preset.key(), preset.claims({ iat: nowSeconds() - 2 }))))).status).toBe(200);
    expect(host.requests).toEqual([preset.route]);
  });

  it('KEY_FETCH=off with nothing pinned is 503 key_unavailable with Retry-After; nothing fetched or published', async () => {
    t = app({ KEY_FETCH: 'off' });
    await registerTrigger(t, name, { name, options: preset.options() });
    const res = await post(name, preset.send(await rs256(preset.key(), preset.claims())));
    expect(expectError(res, 'SERVICE_UNAVAILABLE').details).toEqual({ reason: 'key_unavailable' });
    expect(res.headers['retry-after']).toBe('2');
    expect(host.accepted()).toBe(0);
    expect(t.sink.records).toHaveLength(0);
  });

  it('the catalogue lists it: family oidc, authenticates sender, keys none, the hosts it may fetch from, its kinds with sources', async () => {
    const res = await request(t.admin).get(`/admin/providers/${name}`).set({ Authorization: `Bearer ${ADMIN_TOKEN}` });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ name, family: 'oidc', authenticates: 'sender', keys: 'none', fetches: preset.fetches, eventKinds: expect.arrayContaining([preset.published.kind]) });
    expect(res.body.data.eventKindsSources.length).toBeGreaterThan(0);
  });

  it('options are checked at PUT: 400 naming the path; secrets refused', async () => {
    const missing = await putTrigger(t, `${name}-bad`, { name, options: {} });
    expect(missing.status).toBe(400);
    expect(JSON.stringify(missing.body)).toContain('provider.options');
    expect((await putTrigger(t, `${name}-secret`, { name, secrets: ['x'], options: preset.options() })).status).toBe(400);
    const badKeys = await putTrigger(t, `${name}-jwks`, { name, options: preset.options({ keys: [{ kty: 'EC', kid: 'x' }] }) });
    expect(badKeys.status).toBe(400);
    expect(JSON.stringify(badKeys.body)).toContain('provider.options.jwks');
  });
});

describe('key URLs and handshakes of the OIDC presets', () => {
  it.each([
    ['graph-rich', { appId: GRAPH_APP, tenantIds: [GRAPH_TENANT] }, 'https://login.microsoftonline.com/common/discovery/v2.0/keys'],
    ['bot-framework', { appId: BOT_APP }, 'https://login.botframework.com/v1/.well-known/keys'],
    ['google-chat', { projectNumber: CHAT_PROJECT }, 'https://www.googleapis.com/service_accounts/v1/jwk/chat@system.gserviceaccount.com'],
  ])('%s: jwksUrl is only the platform\'s own key set; another is 400 naming options.jwksUrl', async (name, options, own) => {
    expect((await putTrigger(t, `${name}-own`, { name, options: { ...options, jwksUrl: own } })).status).toBe(200);
    const evil = await putTrigger(t, `${name}-evil`, { name, options: { ...options, jwksUrl: 'https://evil.example.com/jwks' } });
    expect(evil.status).toBe(400);
    expect(JSON.stringify(evil.body)).toContain('provider.options.jwksUrl');
  });

  it('zoho-desk: a data centre off the list is 400 naming options.deskHost', async () => {
    const res = await putTrigger(t, 'zoho-evil', { name: 'zoho-desk', options: { orgId: ZOHO_ORG, webhookId: ZOHO_WEBHOOK, deskHost: 'evil.example.com' } });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain('provider.options.deskHost');
  });

  it("graph-rich answers Graph's subscription validation (?validationToken) with the token as text/plain, publishing nothing", async () => {
    await registerTrigger(t, 'graph-rich', { name: 'graph-rich', options: { appId: GRAPH_APP, tenantIds: [GRAPH_TENANT] } });
    const res = await request(t.app).post(`${hookUrl('graph-rich')}?validationToken=Validation%3A%20Testing%20client%20application%20reachability`).send('');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toBe('Validation: Testing client application reachability');
    expect(t.sink.records).toHaveLength(0);
    expect(host.accepted()).toBe(0);
  });
});
