import { KeyFetcher } from '../../../src/keys/key-fetcher';
import { GRAPH_CHANGE_PUBLISHER_APP_ID, verifyGraphRich, type GraphRichOptions } from '../../../src/providers/families/graph-rich';
import { makeCa, publicResolver, startKeyHost, type KeyHost, type TestCa } from '../keys/key-host';
import { nowSeconds, rs256, rsaKey, type RsaKey } from './jwt-keys';
import { refusesForgedTokens } from './oidc-cases';

const APP_ID = '8ed6d3c0-5a0b-4c8e-9f1a-2b3c4d5e6f70';
const TENANT = '84bd8158-6d4d-4958-8b9f-9d6445542f95';
const OTHER_TENANT = '11111111-2222-3333-4444-555555555555';
const ROUTE = 'login.microsoftonline.com /common/discovery/v2.0/keys';

/** A rich notification as Microsoft's "Set up change notifications that include resource data" shows one (trimmed). */
function collection(tokens: string[], items: Array<Record<string, unknown>> = [{}]) {
  return Buffer.from(
    JSON.stringify({
      validationTokens: tokens,
      value: items.map((item) => ({
        subscriptionId: '76222963-cc7b-42d2-882d-8aaa69cb2ba3',
        changeType: 'created',
        clientState: 'secretClientState',
        subscriptionExpirationDateTime: '2016-03-19T22:11:09.952Z',
        resource: "teams('d29828b8-c04d-4e2a-b2f6-07da6982f0f0')/channels('19:f127a8c55ad949d1a238464d22f0f99e@thread.skype')/messages('1565045424600')",
        resourceData: { id: '1565293727947', '@odata.type': '#Microsoft.Graph.ChatMessage' },
        encryptedContent: { data: '{encrypted data}', dataSignature: '<HMAC-SHA256>', dataKey: '{encrypted symmetric key}', encryptionCertificateId: 'MySelfSignedCert/DDC9651A-D7BC-4D74-86BC-A8923584B0AB', encryptionCertificateThumbprint: '07293748CC064953A3052FB978C735FB89E61C3D' },
        tenantId: TENANT,
        ...item,
      })),
    }),
  );
}

let microsoft: RsaKey;
let tls: TestCa;
let host: KeyHost;
beforeAll(() => {
  microsoft = rsaKey('nOo3ZDrODXEK1jKWhXslHR_KXEg');
  tls = makeCa();
});
beforeEach(async () => {
  host = await startKeyHost(tls);
});
afterEach(() => host.close());

/** The claims Graph's validation tokens carry (Microsoft's guide: aud the app, azp Graph's publisher, iss the tenant's STS). */
const claims = (overrides: Record<string, unknown> = {}) => {
  const iat = nowSeconds();
  return { aud: APP_ID, iss: `https://sts.windows.net/${TENANT}/`, iat, nbf: iat, exp: iat + 3600, azp: GRAPH_CHANGE_PUBLISHER_APP_ID, azpacr: '2', tid: TENANT, ver: '1.0', ...overrides };
};
const options = (extra: Partial<GraphRichOptions> = {}): GraphRichOptions => ({ appId: APP_ID, tenantIds: [TENANT], jwks: { keys: [microsoft.jwk] }, ...extra });
const keys = (extra = {}) => new KeyFetcher({ enabled: true, resolver: publicResolver, dial: host.dial, ca: tls.ca, ...extra });
const verifyRaw = (raw: Buffer, opts = options(), fetcher = keys()) => verifyGraphRich({ raw, options: opts, toleranceSeconds: 300, nowSeconds: nowSeconds(), keys: fetcher });
const verify = (token: string, opts = options(), fetcher = keys()) => verifyRaw(collection([token]), opts, fetcher);
const serve = (...jwks: unknown[]) => host.route(ROUTE, (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: jwks })));

describe('graph-rich (validationTokens of rich notifications, sender only)', () => {
  test("the collection's token from Graph for the app and a listed tenant is accepted: kind changeType", async () => {
    expect(await verify(await rs256(microsoft, claims()))).toEqual({ ok: true, keySource: 'pinned', kid: microsoft.kid, sender: APP_ID, kind: 'created' });
    expect(host.accepted()).toBe(0);
  });

  test("without a pinned JWKS the key is fetched from Microsoft identity's (its local stand-in), then cached", async () => {
    serve(microsoft.jwk);
    const fetcher = keys();
    const token = await rs256(microsoft, claims());
    expect(await verify(token, options({ jwks: undefined }), fetcher)).toMatchObject({ ok: true, keySource: 'fetched' });
    expect(await verify(token, options({ jwks: undefined }), fetcher)).toMatchObject({ ok: true, keySource: 'cache' });
    expect(host.requests).toEqual([ROUTE]);
  });

  test('two tenants, two tokens: both must pass', async () => {
    const both = options({ tenantIds: [TENANT, OTHER_TENANT] });
    const tokens = [await rs256(microsoft, claims()), await rs256(microsoft, claims({ iss: `https://sts.windows.net/${OTHER_TENANT}/` }))];
    const items = [{}, { tenantId: OTHER_TENANT, changeType: 'updated' }];
    expect(await verifyRaw(collection(tokens, items), both)).toMatchObject({ ok: true });
    expect(await verifyRaw(collection(tokens, items), options())).toEqual({ ok: false, reason: 'sender_not_allowed', sender: `https://sts.windows.net/${OTHER_TENANT}/` });
  });

  test.each([
    ['another tenant', { iss: `https://sts.windows.net/${OTHER_TENANT}/` }],
    ['another app', { aud: 'another-app-id' }],
    ['a token not minted for Graph (another azp)', { azp: 'some-other-client-id' }],
  ])('a valid token of %s is sender_not_allowed (403)', async (_name, overrides) => {
    expect(await verify(await rs256(microsoft, claims(overrides)))).toMatchObject({ ok: false, reason: 'sender_not_allowed' });
  });

  test("a notification of a tenant the trigger does not list is sender_not_allowed, whatever the tokens", async () => {
    const raw = collection([await rs256(microsoft, claims())], [{}, { tenantId: OTHER_TENANT }]);
    expect(await verifyRaw(raw)).toEqual({ ok: false, reason: 'sender_not_allowed', sender: OTHER_TENANT });
  });

  test('one forged token among valid ones refuses the collection', async () => {
    const raw = collection([await rs256(microsoft, claims()), await rs256(rsaKey(microsoft.kid), claims())]);
    expect(await verifyRaw(raw)).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  test.each([
    ['no validationTokens (a notification without resource data)', Buffer.from(JSON.stringify({ value: [{ changeType: 'created' }] }))],
    ['an empty list', Buffer.from(JSON.stringify({ value: [], validationTokens: [] }))],
    ['more tokens than Graph sends', Buffer.from(JSON.stringify({ value: [], validationTokens: Array(21).fill('a.b.c') }))],
    ['not JSON', Buffer.from('hello')],
  ])('%s is signature_missing', async (_name, raw) => {
    expect(await verifyRaw(raw)).toEqual({ ok: false, reason: 'signature_missing' });
  });

  test('no exp is signature_invalid; an expired token is timestamp_out_of_tolerance', async () => {
    expect(await verify(await rs256(microsoft, claims({ exp: undefined })))).toEqual({ ok: false, reason: 'signature_invalid' });
    expect(await verify(await rs256(microsoft, claims({ exp: nowSeconds() - 301 })))).toEqual({ ok: false, reason: 'timestamp_out_of_tolerance' });
  });

  refusesForgedTokens({
    key: () => microsoft,
    claims,
    verifyPinned: (token) => verify(token),
    verifyFetched: (token) => verify(token, options({ jwks: undefined })),
    serveKeys: () => serve(microsoft.jwk),
    host: () => host,
    route: ROUTE,
  });
});
