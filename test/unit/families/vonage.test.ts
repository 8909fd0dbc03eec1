import { verifySignature } from '@vonage/jwt';
import { verifyVonage, vonagePrecheck } from '../../../src/providers/families/vonage';
import { hs256, hs256ByHand, nowSeconds, rs256, rsaKey, sha256Hex, unsigned } from './jwt-keys';

// The Messages API's status and inbound-SMS callbacks as Vonage's API reference shows them.
const status = Buffer.from(
  JSON.stringify({
    message_uuid: 'aaaaaaaa-bbbb-4ccc-8ddd-0123456789ab',
    to: '447700900000',
    from: '447700900001',
    timestamp: '2025-02-03T12:14:25Z',
    status: 'delivered',
    usage: { currency: 'EUR', price: '0.0333' },
    channel: 'sms',
  }),
);
const inbound = Buffer.from(
  JSON.stringify({
    channel: 'sms',
    message_uuid: 'aaaaaaaa-bbbb-4ccc-8ddd-0123456789ab',
    to: '447700900000',
    from: '447700900001',
    timestamp: '2025-02-03T12:14:25Z',
    text: 'Hello From Vonage!',
    sms: { num_messages: '2', keyword: 'HELLO' },
    message_type: 'text',
  }),
);

const SECRET = 'q7hQKx2w8Rf2JZtVvSb3m4N9pLk0YcDe';
const OTHER = 'Zt0pVw1Ls9Xq2Mn8Bc7Df6Gh5Jk4Rt3E';

/** The claims Vonage's signed-webhook docs list: iat, jti, iss, payload_hash, api_key, application_id. */
function claims(body: Buffer, iat = nowSeconds()) {
  return { iat, jti: 'c5ba8f24-1a14-4c10-bfdf-3fbe8ce511b5', iss: 'Vonage', payload_hash: sha256Hex(body), api_key: 'a1b2c3d', application_id: 'aaaaaaaa-bbbb-cccc-dddd-0123456789ab' };
}

function verify(token: string | undefined, raw: Buffer, secrets = [SECRET], now = nowSeconds()) {
  return verifyVonage({ authorization: token === undefined ? undefined : `Bearer ${token}`, raw, secrets, toleranceSeconds: 300, nowSeconds: now });
}

describe('vonage signed webhooks (HS256, payload_hash)', () => {
  test('a status callback Vonage signs is accepted by @vonage/jwt and by the gateway, with kind and id', async () => {
    const token = await hs256(claims(status), SECRET);
    expect(verifySignature(token, SECRET)).toBe(true);
    expect(await verify(token, status)).toEqual({
      ok: true,
      keySource: 'pinned',
      kind: 'message.status.delivered',
      deliveryId: 'aaaaaaaa-bbbb-4ccc-8ddd-0123456789ab:delivered',
    });
  });

  test('an inbound message is message.inbound, id the message_uuid', async () => {
    const token = await hs256(claims(inbound), SECRET);
    expect(verifySignature(token, SECRET)).toBe(true);
    expect(await verify(token, inbound)).toMatchObject({ ok: true, kind: 'message.inbound', deliveryId: 'aaaaaaaa-bbbb-4ccc-8ddd-0123456789ab' });
  });

  test('either of two secrets verifies while rotating', async () => {
    const token = await hs256(claims(status), OTHER);
    expect(await verify(token, status, [SECRET, OTHER])).toMatchObject({ ok: true });
    expect(await verify(token, status, [SECRET])).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  test('a body other than the one hashed is signature_invalid, though the token itself is valid (@vonage/jwt checks no payload_hash)', async () => {
    const token = await hs256(claims(status), SECRET);
    const altered = Buffer.from(status.toString().replace('delivered', 'rejected'));
    expect(verifySignature(token, SECRET)).toBe(true);
    expect(await verify(token, altered)).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  test('a token without payload_hash is signature_invalid', async () => {
    const { payload_hash: _dropped, ...rest } = claims(status);
    expect(await verify(await hs256(rest, SECRET), status)).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  test('alg none is refused', async () => {
    expect(await verify(unsigned(claims(status)), status)).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  test('an RS256 token is refused though @vonage/jwt would take it with the matching key (the algorithm is pinned to HS256)', async () => {
    const key = rsaKey('k');
    const token = await rs256(key, claims(status));
    expect(verifySignature(token, key.publicPem)).toBe(true);
    expect(await verify(token, status, [key.publicPem])).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  test.each([
    ['stale', -301],
    ['from the future', 301],
  ])('an iat %s beyond the tolerance is timestamp_out_of_tolerance; within it passes', async (_name, offset) => {
    const now = nowSeconds();
    const token = await hs256(claims(status, now + offset), SECRET);
    expect(await verify(token, status, [SECRET], now)).toEqual({ ok: false, reason: 'timestamp_out_of_tolerance' });
    const inside = await hs256(claims(status, now + Math.sign(offset) * 299), SECRET);
    expect(await verify(inside, status, [SECRET], now)).toMatchObject({ ok: true });
  });

  test('a token without iat is signature_invalid', async () => {
    const { iat: _dropped, ...rest } = claims(status);
    expect(await verify(await hs256(rest, SECRET), status)).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  test.each([
    ['no header', undefined],
    ['a Basic header', 'Basic dXNlcjpwdw=='],
    ['a bearer that is not a JWT', 'Bearer not-a-jwt'],
    ['a bearer of two parts', 'Bearer a.b'],
    ['an oversized token', `Bearer ${'a'.repeat(9000)}.b.c`],
  ])('%s is signature_missing', async (_name, authorization) => {
    const result = await verifyVonage({ authorization, raw: status, secrets: [SECRET], toleranceSeconds: 300, nowSeconds: nowSeconds() });
    expect(result).toEqual({ ok: false, reason: 'signature_missing' });
  });

  test('the header precheck refuses a missing bearer before the body is read', () => {
    expect(vonagePrecheck(undefined)).toBe('signature_missing');
    expect(vonagePrecheck('Bearer a.b.c')).toBeUndefined();
  });

  test('an empty secret verifies nothing (a token signed with the empty key is refused)', async () => {
    const token = hs256ByHand(claims(status), '');
    expect(await verify(token, status, [''])).toEqual({ ok: false, reason: 'signature_invalid' });
  });
});
