import { verifyGong } from '../../../src/providers/families/gong';
import { hs256, nowSeconds, rs256, rsaKey, sha256Hex, unsigned, type RsaKey } from './jwt-keys';

// Gong has no Node verifier: the token is signed as Gong documents it (RS256, body_sha256, webhook_url, exp).
const URL = 'https://hooks.example.com/t/gong';
const body = Buffer.from(JSON.stringify({ callData: { metaData: { id: '7782342274025937895', title: 'Weekly sync' } } }));

let gong: RsaKey;
beforeAll(() => {
  gong = rsaKey('gong');
});

const claims = (overrides: Record<string, unknown> = {}) => ({ webhook_url: URL, body_sha256: sha256Hex(body), exp: nowSeconds() + 300, ...overrides });

function verify(token: string, raw = body, publicKeys = [gong.publicPem]) {
  return verifyGong({ authorization: `Bearer ${token}`, raw, publicKeys, url: URL, toleranceSeconds: 300, nowSeconds: nowSeconds() });
}

describe('gong (RS256 with a pinned key, body_sha256)', () => {
  test('a token over this body for this URL is accepted', async () => {
    expect(await verify(await rs256(gong, claims()))).toEqual({ ok: true, keySource: 'pinned' });
  });

  test('the second pinned key verifies while rotating', async () => {
    const old = rsaKey('old');
    expect(await verify(await rs256(gong, claims()), body, [old.publicPem, gong.publicPem])).toMatchObject({ ok: true });
  });

  test.each([
    ['another body', () => rs256(gong, claims()), Buffer.from('{}')],
    ['another URL', () => rs256(gong, claims({ webhook_url: 'https://hooks.example.com/t/other' })), body],
    ['no body hash', () => rs256(gong, claims({ body_sha256: undefined })), body],
    ['another key', () => rs256(rsaKey('x'), claims()), body],
    ['alg none', async () => unsigned(claims()), body],
    ['HS256 keyed with the public PEM', () => hs256(claims(), gong.publicPem), body],
  ])('%s is signature_invalid', async (_name, sign, raw) => {
    expect(await verify(await sign(), raw)).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  test('an expired token is timestamp_out_of_tolerance', async () => {
    expect(await verify(await rs256(gong, claims({ exp: nowSeconds() - 301 })))).toEqual({ ok: false, reason: 'timestamp_out_of_tolerance' });
  });
});
