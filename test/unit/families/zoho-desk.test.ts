import { KeyFetcher } from '../../../src/keys/key-fetcher';
import { verifyZohoDesk, type ZohoDeskOptions } from '../../../src/providers/families/zoho-desk';
import { makeCa, publicResolver, startKeyHost, type KeyHost, type TestCa } from '../keys/key-host';
import { nowSeconds, rs256, rsaKey, type RsaKey } from './jwt-keys';
import { refusesForgedTokens } from './oidc-cases';

// A Zoho Desk webhook body: an array of events with payload, eventTime, eventType, orgId as Zoho Desk's webhook guide names them (values illustrative).
const events = Buffer.from(
  JSON.stringify([{ payload: { id: '1892000000093003', subject: 'Real Time analysis Report', status: 'Open' }, eventTime: '1565616423451', eventType: 'Ticket_Add', orgId: '2389290' }]),
);
const ORG = '2389290';
const WEBHOOK = '1892000000427001';
const ROUTE = 'desk.zoho.eu /.well-known/jwks.json';

let zoho: RsaKey;
let tls: TestCa;
let host: KeyHost;
beforeAll(() => {
  zoho = rsaKey('zoho-desk-1');
  tls = makeCa();
});
beforeEach(async () => {
  host = await startKeyHost(tls);
});
afterEach(() => host.close());

const claims = (overrides: Record<string, unknown> = {}) => {
  const iat = nowSeconds();
  return { iss: `orgId:${ORG}`, aud: `webhookId:${WEBHOOK}`, iat, exp: iat + 300, ...overrides };
};
const options = (extra: Partial<ZohoDeskOptions> = {}): ZohoDeskOptions => ({ orgId: ORG, webhookId: WEBHOOK, deskHost: 'desk.zoho.eu', jwks: { keys: [zoho.jwk] }, ...extra });
const keys = (extra = {}) => new KeyFetcher({ enabled: true, resolver: publicResolver, dial: host.dial, ca: tls.ca, ...extra });
const verify = (token: string | undefined, opts = options(), fetcher = keys(), raw = events) =>
  verifyZohoDesk({ token, raw, options: opts, toleranceSeconds: 300, nowSeconds: nowSeconds(), keys: fetcher });
const serve = (...jwks: unknown[]) =>
  host.route(ROUTE, (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: jwks })));

describe('zoho-desk (X-ZDesk-JWT, sender only)', () => {
  test('a token of the org and webhook is accepted with the pinned JWKS: kind eventType, the org as sender; nothing fetched', async () => {
    expect(await verify(await rs256(zoho, claims()))).toEqual({ ok: true, keySource: 'pinned', kid: zoho.kid, sender: `orgId:${ORG}`, kind: 'Ticket_Add' });
    expect(host.accepted()).toBe(0);
  });

  test("without a pinned JWKS the key is fetched from the org's data centre (its local stand-in), then cached", async () => {
    serve(zoho.jwk);
    const fetcher = keys();
    const token = await rs256(zoho, claims());
    expect(await verify(token, options({ jwks: undefined }), fetcher)).toMatchObject({ ok: true, keySource: 'fetched' });
    expect(await verify(token, options({ jwks: undefined }), fetcher)).toMatchObject({ ok: true, keySource: 'cache' });
    expect(host.requests).toEqual([ROUTE]);
  });

  test('events of different types have no shared kind', async () => {
    const mixed = Buffer.from(JSON.stringify([{ eventType: 'Ticket_Add' }, { eventType: 'Ticket_Update' }]));
    const result = await verify(await rs256(zoho, claims()), options(), keys(), mixed);
    expect(result).toMatchObject({ ok: true });
    expect(result).not.toHaveProperty('kind', expect.anything());
  });

  test('Zoho unreachable is key_unavailable (503)', async () => {
    expect(await verify(await rs256(zoho, claims()), options({ jwks: undefined }))).toEqual({ ok: false, reason: 'key_unavailable' });
  });

  test.each([
    ['another organization', { iss: 'orgId:99999' }, 'orgId:99999'],
    ['another webhook of the organization', { aud: 'webhookId:1892000000999999' }, `orgId:${ORG}`],
  ])('a valid token of %s is sender_not_allowed (403)', async (_name, overrides, sender) => {
    expect(await verify(await rs256(zoho, claims(overrides)))).toEqual({ ok: false, reason: 'sender_not_allowed', sender });
  });

  test('no exp is signature_invalid; an expired token is timestamp_out_of_tolerance', async () => {
    expect(await verify(await rs256(zoho, claims({ exp: undefined })))).toEqual({ ok: false, reason: 'signature_invalid' });
    expect(await verify(await rs256(zoho, claims({ iat: nowSeconds() - 1000, exp: nowSeconds() - 301 })))).toEqual({ ok: false, reason: 'timestamp_out_of_tolerance' });
  });

  test('no token is signature_missing', async () => {
    expect(await verify(undefined)).toEqual({ ok: false, reason: 'signature_missing' });
  });

  refusesForgedTokens({
    key: () => zoho,
    claims,
    verifyPinned: (token) => verify(token),
    verifyFetched: (token) => verify(token, options({ jwks: undefined })),
    serveKeys: () => serve(zoho.jwk),
    host: () => host,
    route: ROUTE,
  });
});
