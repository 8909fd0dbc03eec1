import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { KeyFetcher } from '../../../src/keys/key-fetcher';
import { verifyPlaid } from '../../../src/providers/families/plaid';
import { makeCa, publicResolver, startKeyHost, type KeyHost, type TestCa } from '../keys/key-host';
import { hs256, nowSeconds, sha256Hex, unsigned } from './jwt-keys';

// Plaid ships no Node verifier: tokens are signed as Plaid's "Verify webhooks" guide describes (ES256,
// kid, iat, request_body_sha256); the body is the SYNC_UPDATES_AVAILABLE example of its docs.
const body = Buffer.from(
  JSON.stringify({
    webhook_type: 'TRANSACTIONS',
    webhook_code: 'SYNC_UPDATES_AVAILABLE',
    item_id: 'wz666MBjYWTp2PDzzggYhM6oWWmBb',
    initial_update_complete: true,
    historical_update_complete: false,
    environment: 'sandbox',
  }),
);
const KID = 'bfbd5111-8e33-4643-8ced-b2e642a72f3c';
const ROUTE = 'sandbox.plaid.com /webhook_verification_key/get';

let tls: TestCa;
let host: KeyHost;
let signer: { privateKey: CryptoKey; jwk: JWK };
let expiredAt: number | null;
let asked: Array<Record<string, string>>;

beforeAll(async () => {
  tls = makeCa();
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  signer = { privateKey, jwk: await exportJWK(publicKey) };
});
beforeEach(async () => {
  host = await startKeyHost(tls);
  expiredAt = null;
  asked = [];
  host.route(ROUTE, (_req, res, request) => {
    const json = JSON.parse(request.toString()) as Record<string, string>;
    asked.push(json);
    if (json.key_id !== KID) return void res.writeHead(400, { 'content-type': 'application/json' }).end('{"error_code":"INVALID_KEY_ID"}');
    const key = { alg: 'ES256', created_at: 1560466150, crv: 'P-256', expired_at: expiredAt, kid: KID, kty: 'EC', use: 'sig', x: signer.jwk.x, y: signer.jwk.y };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ key, request_id: 'RZ6Omi1bzzwDaLo' }));
  });
});
afterEach(() => host.close());

const keys = (extra = {}) => new KeyFetcher({ enabled: true, resolver: publicResolver, dial: host.dial, ca: tls.ca, ...extra });

function token(claims: Record<string, unknown> = {}, kid = KID) {
  return new SignJWT({ iat: nowSeconds(), request_body_sha256: sha256Hex(body), ...claims }).setProtectedHeader({ alg: 'ES256', kid, typ: 'JWT' }).sign(signer.privateKey);
}

function verify(verification: string | undefined, fetcher = keys(), raw = body) {
  return verifyPlaid({
    verification,
    raw,
    options: { clientId: 'client-1', environment: 'sandbox' },
    secret: 'plaid-secret',
    toleranceSeconds: 300,
    nowSeconds: nowSeconds(),
    keys: fetcher,
  });
}

describe('plaid (ES256, key by kid from the key API)', () => {
  test("a webhook is accepted with the key Plaid's API gives for its kid, then from the cache", async () => {
    const fetcher = keys();
    expect(await verify(await token(), fetcher)).toEqual({ ok: true, keySource: 'fetched', kid: KID, kind: 'TRANSACTIONS.SYNC_UPDATES_AVAILABLE' });
    expect(await verify(await token(), fetcher)).toMatchObject({ ok: true, keySource: 'cache' });
    expect(asked).toEqual([{ client_id: 'client-1', secret: 'plaid-secret', key_id: KID }]);
  });

  test('another body than the one hashed is signature_invalid', async () => {
    expect(await verify(await token(), keys(), Buffer.from('{}'))).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  test('a token older than five minutes is timestamp_out_of_tolerance, also under a longer trigger tolerance', async () => {
    expect(await verify(await token({ iat: nowSeconds() - 301 }))).toEqual({ ok: false, reason: 'timestamp_out_of_tolerance' });
    const lenient = await verifyPlaid({
      verification: await token({ iat: nowSeconds() - 301 }),
      raw: body,
      options: { clientId: 'client-1', environment: 'sandbox' },
      secret: 'plaid-secret',
      toleranceSeconds: 3600,
      nowSeconds: nowSeconds(),
      keys: keys(),
    });
    expect(lenient).toEqual({ ok: false, reason: 'timestamp_out_of_tolerance' });
    expect(await verify(await token({ iat: nowSeconds() - 290 }))).toMatchObject({ ok: true });
  });

  test('a key Plaid marks expired is not used', async () => {
    expiredAt = nowSeconds() - 60;
    expect(await verify(await token())).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  test.each([
    ['alg none', () => Promise.resolve(unsigned({ iat: nowSeconds(), request_body_sha256: sha256Hex(body) }, { kid: KID }))],
    ['HS256 keyed with the client secret', () => hs256({ iat: nowSeconds(), request_body_sha256: sha256Hex(body) }, 'plaid-secret', { kid: KID })],
  ])('%s is signature_invalid, and no key is asked for', async (_name, sign) => {
    expect(await verify(await sign())).toEqual({ ok: false, reason: 'signature_invalid' });
    expect(asked).toEqual([]);
  });

  test('Plaid unreachable, or a kid Plaid does not know, is key_unavailable (503)', async () => {
    expect(await verify(await token(), keys({ enabled: false }))).toEqual({ ok: false, reason: 'key_unavailable' });
    expect(await verify(await token({}, 'forged-kid'))).toEqual({ ok: false, reason: 'key_unavailable' });
  });

  test('no header is signature_missing', async () => {
    expect(await verify(undefined)).toEqual({ ok: false, reason: 'signature_missing' });
  });
});
