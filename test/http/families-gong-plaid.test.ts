/**
 * The gong and plaid presets through HTTP (contract §10.1 D). Neither ships a Node verifier:
 * tokens are signed as their docs say (Gong: RS256, body_sha256, webhook_url; Plaid: ES256 by
 * kid, request_body_sha256, iat), after the family unit tests. Plaid's key API is a local
 * stand-in (a throw-away CA): nothing leaves the machine.
 */
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import request from 'supertest';
import { testApp } from '../helpers/app';
import { expectError, hookUrl } from '../helpers/http';
import { eventOf, PUBLIC_BASE_URL, publicUrl, putTrigger, registerTrigger, type TestApp } from '../helpers/presets';
import { makeCa, publicResolver, startKeyHost, type KeyHost, type TestCa } from '../unit/keys/key-host';
import { nowSeconds, rs256, rsaKey, sha256Hex, type RsaKey } from '../unit/families/jwt-keys';

let t: TestApp;
let tls: TestCa;
let host: KeyHost;
beforeAll(() => {
  tls = makeCa();
});
beforeEach(async () => {
  host = await startKeyHost(tls);
  t = testApp(
    { PUBLIC_BASE_URL },
    { keyTransport: { resolver: publicResolver, dial: host.dial, ca: tls.ca, limits: { connectTimeoutMs: 1000, totalTimeoutMs: 1000, maxBodyBytes: 64 * 1024 } } },
  );
});
afterEach(() => host.close());

const post = (path: string, body: string, headers: Record<string, string> = {}) =>
  request(t.app).post(hookUrl(path)).set('Content-Type', 'application/json').set(headers).send(body);

describe('gong preset (RS256, pinned PEM)', () => {
  const BODY = JSON.stringify({ callData: { metaData: { id: '7782342274025937895', title: 'Weekly sync' } }, isTest: false });
  let gong: RsaKey;
  beforeAll(() => {
    gong = rsaKey('gong');
  });
  const claims = (overrides: Record<string, unknown> = {}) => ({ webhook_url: publicUrl('gong'), body_sha256: sha256Hex(BODY), exp: nowSeconds() + 300, ...overrides });

  it('a signed delivery is published (kind call, body claim); a replay publishes nothing; a changed byte, no token, another URL are 401', async () => {
    await registerTrigger(t, 'gong', { name: 'gong', publicKeys: [gong.publicPem] });
    const token = await rs256(gong, claims());
    const res = await post('gong', BODY, { Authorization: `Bearer ${token}` });
    expect(res.status).toBe(200);
    expect(eventOf(t.sink.records[0]).data.provider).toMatchObject({ name: 'gong', kind: 'call', verified: true, authenticates: 'body' });
    const replay = await post('gong', BODY, { Authorization: `Bearer ${await rs256(gong, claims({ exp: nowSeconds() + 299 }))}` });
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(expectError(await post('gong', BODY.replace('Weekly', 'Weeklq'), { Authorization: `Bearer ${token}` }), 'UNAUTHORIZED').details).toEqual({ reason: 'signature_invalid' });
    expect(expectError(await post('gong', BODY), 'UNAUTHORIZED').details).toEqual({ reason: 'signature_missing' });
    const elsewhere = await rs256(gong, claims({ webhook_url: publicUrl('other') }));
    expect(expectError(await post('gong', BODY, { Authorization: `Bearer ${elsewhere}` }), 'UNAUTHORIZED').details).toEqual({ reason: 'signature_invalid' });
    expect(t.sink.records).toHaveLength(1);
  });

  it('needs publicKeys (an RSA PEM), not secrets', async () => {
    expect((await putTrigger(t, 'g1', { name: 'gong', secrets: ['s'] })).status).toBe(400);
    expect((await putTrigger(t, 'g2', { name: 'gong', publicKeys: ['not a key'] })).status).toBe(400);
  });
});

describe('plaid preset (ES256, key by kid from a local stand-in for Plaid)', () => {
  const BODY = JSON.stringify({
    webhook_type: 'TRANSACTIONS',
    webhook_code: 'SYNC_UPDATES_AVAILABLE',
    item_id: 'wz666MBjYWTp2PDzzggYhM6oWWmBb',
    initial_update_complete: true,
    historical_update_complete: false,
    environment: 'sandbox',
  });
  const KID = 'bfbd5111-8e33-4643-8ced-b2e642a72f3c';
  const ROUTE = 'sandbox.plaid.com /webhook_verification_key/get';
  const SECRET = 'plaid-sandbox-secret-0123456789';
  let signer: { privateKey: CryptoKey; jwk: JWK };
  beforeAll(async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    signer = { privateKey, jwk: await exportJWK(publicKey) };
  });
  const token = (body = BODY, header: Record<string, unknown> = {}) =>
    new SignJWT({ iat: nowSeconds(), request_body_sha256: sha256Hex(body) }).setProtectedHeader({ alg: 'ES256', kid: KID, typ: 'JWT', ...header }).sign(signer.privateKey);
  function servePlaid() {
    host.route(ROUTE, (_req, res, sent) => {
      const json = JSON.parse(sent.toString()) as Record<string, string>;
      if (json.key_id !== KID || json.secret !== SECRET) return void res.writeHead(400).end('{}');
      const key = { alg: 'ES256', created_at: 1560466150, crv: 'P-256', expired_at: null, kid: KID, kty: 'EC', use: 'sig', x: signer.jwk.x, y: signer.jwk.y };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ key, request_id: 'RZ6Omi1bzzwDaLo' }));
    });
  }
  const provider = { name: 'plaid', secrets: [SECRET], options: { clientId: 'client1', environment: 'sandbox' } };

  it('a webhook is published with kind webhook_type.webhook_code, the key asked once then cached; the secret never published', async () => {
    servePlaid();
    await registerTrigger(t, 'plaid', provider);
    expect((await post('plaid', BODY, { 'Plaid-Verification': await token() })).status).toBe(200);
    expect(eventOf(t.sink.records[0]).data.provider).toMatchObject({ name: 'plaid', kind: 'TRANSACTIONS.SYNC_UPDATES_AVAILABLE', verified: true });
    const other = BODY.replace('"initial_update_complete":true', '"initial_update_complete":false');
    expect((await post('plaid', other, { 'Plaid-Verification': await token(other) })).status).toBe(200);
    expect(host.requests).toEqual([ROUTE]);
    expect(JSON.stringify(t.sink.records)).not.toContain(SECRET);
    expect(t.logLines.join('\n')).not.toContain(SECRET);
  });

  it('a changed byte is 401; no header is 401 signature_missing; a jku in the header (a local listener) is never fetched', async () => {
    servePlaid();
    await registerTrigger(t, 'plaid', provider);
    const genuine = await token();
    expect(expectError(await post('plaid', BODY.replace('TRANSACTIONS', 'TRANSACTIONQ'), { 'Plaid-Verification': genuine }), 'UNAUTHORIZED').details).toEqual({ reason: 'signature_invalid' });
    expect(expectError(await post('plaid', BODY), 'UNAUTHORIZED').details).toEqual({ reason: 'signature_missing' });
    // An attacker's key, offered through jku (served by a local listener): Plaid's key for the kid is used, never the jku's.
    const attacker = await generateKeyPair('ES256');
    host.route('evil.example.com /jwks', async (_req, res) => res.writeHead(200).end(JSON.stringify({ keys: [{ ...(await exportJWK(attacker.publicKey)), kid: KID }] })));
    const withJku = await new SignJWT({ iat: nowSeconds(), request_body_sha256: sha256Hex(BODY) })
      .setProtectedHeader({ alg: 'ES256', kid: KID, typ: 'JWT', jku: 'https://evil.example.com/jwks' })
      .sign(attacker.privateKey);
    const res = await post('plaid', BODY, { 'Plaid-Verification': withJku });
    expect(expectError(res, 'UNAUTHORIZED').details).toEqual({ reason: 'signature_invalid' });
    expect(host.requests.filter((line) => line.startsWith('evil.example.com'))).toEqual([]);
    expect(t.sink.records).toHaveLength(0);
  });

  it("Plaid's key API hanging is 503 key_unavailable with Retry-After, nothing published", async () => {
    host.route(ROUTE, () => undefined);
    await registerTrigger(t, 'plaid', provider);
    const res = await post('plaid', BODY, { 'Plaid-Verification': await token() });
    expect(expectError(res, 'SERVICE_UNAVAILABLE').details).toEqual({ reason: 'key_unavailable' });
    expect(res.headers['retry-after']).toBe('2');
    expect(t.sink.records).toHaveLength(0);
  });
});
