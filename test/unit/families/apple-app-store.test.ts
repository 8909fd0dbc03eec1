import { createPrivateKey, X509Certificate } from 'node:crypto';
import { Environment, SignedDataVerifier } from '@apple/app-store-server-library';
import { CompactSign } from 'jose';
import { APPLE_ROOT_CA_G3_PEM } from '../../../src/providers/families/apple-root';
import { verifyAppleAppStore, type AppleAppStoreOptions } from '../../../src/providers/families/apple-app-store';
import { derBase64, makeChain, type TestChain } from './cert-chain';

const LEAF_MARK = ['1.2.840.113635.100.6.11.1=ASN1:NULL'];
const INTERMEDIATE_MARK = ['1.2.840.113635.100.6.2.1=ASN1:NULL'];
const appleLike = () => makeChain({ leafKey: 'ec', leafSubject: '/CN=Prod ECC Mac App Store and iTunes Store Receipt Signing', leafExtensions: LEAF_MARK, intermediateExtensions: INTERMEDIATE_MARK });

let apple: TestChain;
let foreign: TestChain;
beforeAll(() => {
  apple = appleLike();
  foreign = appleLike();
});

/** The decoded notification of Apple's library fixture (tests/resources/models/signedConsumptionRequestNotification.json), in the Sandbox and signed now. */
function notification(overrides: Record<string, unknown> = {}, data: Record<string, unknown> = {}) {
  return {
    notificationType: 'CONSUMPTION_REQUEST',
    notificationUUID: '002e14d5-51f5-4503-b5a8-c3a1af68eb20',
    data: {
      environment: 'Sandbox',
      appAppleId: 41234,
      bundleId: 'com.example',
      bundleVersion: '1.2.3',
      signedTransactionInfo: 'signed_transaction_info_value',
      signedRenewalInfo: 'signed_renewal_info_value',
      status: 1,
      consumptionRequestReason: 'UNINTENDED_PURCHASE',
      ...data,
    },
    version: '2.0',
    signedDate: Date.now(),
    ...overrides,
  };
}

/** As Apple signs: ES256 JWS, the chain in x5c (leaf, intermediate, root). */
function signPayload(payload: unknown, chain = apple, header: Record<string, unknown> = {}): Promise<string> {
  return new CompactSign(Buffer.from(JSON.stringify(payload)))
    .setProtectedHeader({ alg: 'ES256', x5c: [chain.leaf, chain.intermediate, chain.root].map(derBase64), ...header })
    .sign(createPrivateKey(chain.leafKey));
}

const body = (signedPayload: string) => Buffer.from(JSON.stringify({ signedPayload }));
const options = (extra: Partial<AppleAppStoreOptions> = {}): AppleAppStoreOptions => ({ bundleId: 'com.example', environment: 'Sandbox', ...extra });

function verify(signedPayload: string, opts = options(), anchors = [new X509Certificate(apple.root)], toleranceSeconds?: number) {
  return verifyAppleAppStore({ raw: body(signedPayload), options: opts, toleranceSeconds, nowSeconds: Math.floor(Date.now() / 1000), trustAnchors: anchors });
}

/** Apple's own verifier, given the test root as its root (online checks off). */
function appleAccepts(signedPayload: string, root = apple.root, bundleId = 'com.example') {
  const verifier = new SignedDataVerifier([new X509Certificate(root).raw], false, Environment.SANDBOX, bundleId);
  return verifier.verifyAndDecodeNotification(signedPayload);
}

describe('apple-app-store (JWS with x5c to a pinned root)', () => {
  test("the pinned root is Apple Root CA - G3 by Apple's published SHA-256 fingerprint", () => {
    const root = new X509Certificate(APPLE_ROOT_CA_G3_PEM);
    expect(root.fingerprint256).toBe('63:34:3A:BF:B8:9A:6A:03:EB:B5:7E:9B:3F:5F:A7:BE:7C:4F:5C:75:6F:30:17:B3:A8:C4:88:C3:65:3E:91:79');
    expect(root.subject).toContain('CN=Apple Root CA - G3');
  });

  test("a notification Apple's SignedDataVerifier accepts is accepted: kind, id, the bundle as sender", async () => {
    const jws = await signPayload(notification());
    expect(await appleAccepts(jws)).toMatchObject({ notificationUUID: '002e14d5-51f5-4503-b5a8-c3a1af68eb20' });
    expect(await verify(jws)).toEqual({
      ok: true,
      kind: 'CONSUMPTION_REQUEST',
      deliveryId: '002e14d5-51f5-4503-b5a8-c3a1af68eb20',
      sender: 'com.example',
      keySource: 'pinned',
    });
  });

  test('a subtype joins the kind', async () => {
    const jws = await signPayload(notification({ notificationType: 'SUBSCRIBED', subtype: 'INITIAL_BUY' }));
    expect(await appleAccepts(jws)).toMatchObject({ subtype: 'INITIAL_BUY' });
    expect(await verify(jws)).toMatchObject({ ok: true, kind: 'SUBSCRIBED.INITIAL_BUY' });
  });

  test('by default only Apple Root CA - G3 is trusted: the test chain is signature_invalid', async () => {
    const jws = await signPayload(notification());
    const result = await verifyAppleAppStore({ raw: body(jws), options: options(), nowSeconds: Math.floor(Date.now() / 1000) });
    expect(result).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  test('a chain to another root is signature_invalid (Apple refuses it too), whatever root x5c carries', async () => {
    const jws = await signPayload(notification(), foreign);
    await expect(appleAccepts(jws)).rejects.toMatchObject({ status: expect.anything() });
    expect(await verify(jws)).toEqual({ ok: false, reason: 'signature_invalid' });
    // The pinned root sent as x5c[2] changes nothing: the sent root is never used.
    const dressed = await signPayload(notification(), foreign, { x5c: [foreign.leaf, foreign.intermediate, apple.root].map(derBase64) });
    expect(await verify(dressed)).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  test("certificates under the root without Apple's marks are signature_invalid (Apple refuses them too)", async () => {
    const unmarked = makeChain({ leafKey: 'ec', leafSubject: '/CN=any developer' });
    const jws = await signPayload(notification(), unmarked);
    await expect(appleAccepts(jws, unmarked.root)).rejects.toBeDefined();
    expect(await verify(jws, options(), [new X509Certificate(unmarked.root)])).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  test('a payload altered after signing is signature_invalid', async () => {
    const [head, , signature] = (await signPayload(notification())).split('.');
    const forged = Buffer.from(JSON.stringify(notification({ notificationType: 'REFUND' }))).toString('base64url');
    const jws = `${head}.${forged}.${signature}`;
    await expect(appleAccepts(jws)).rejects.toBeDefined();
    expect(await verify(jws)).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  test('a leaf whose key did not sign (the x5c of Apple, the signature of another key) is signature_invalid', async () => {
    const jws = await new CompactSign(Buffer.from(JSON.stringify(notification())))
      .setProtectedHeader({ alg: 'ES256', x5c: [apple.leaf, apple.intermediate, apple.root].map(derBase64) })
      .sign(createPrivateKey(foreign.leafKey));
    expect(await verify(jws)).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  test.each([
    ['another bundle id', { bundleId: 'com.other.app' }, 'com.other.app'],
    ['the production environment', { environment: 'Production' }, 'com.example'],
  ])('a valid notification for %s is sender_not_allowed (403)', async (_name, data, sender) => {
    const jws = await signPayload(notification({}, data));
    expect(await verify(jws)).toEqual({ ok: false, reason: 'sender_not_allowed', sender });
  });

  test('a trigger for Production refuses a Sandbox notification', async () => {
    expect(await verify(await signPayload(notification()), options({ environment: 'Production' }))).toMatchObject({ reason: 'sender_not_allowed' });
  });

  test('no tolerance unless the trigger sets one; then on signedDate', async () => {
    const old = await signPayload(notification({ signedDate: Date.now() - 3_600_000 }));
    expect(await verify(old)).toMatchObject({ ok: true });
    expect(await verify(old, options(), [new X509Certificate(apple.root)], 300)).toEqual({ ok: false, reason: 'timestamp_out_of_tolerance' });
  });

  test.each([
    ['not JSON', Buffer.from('hello')],
    ['no signedPayload', Buffer.from('{"notificationType":"TEST"}')],
    ['a signedPayload that is not a JWS', Buffer.from('{"signedPayload":"a.b"}')],
    ['a megabyte signedPayload', Buffer.from(JSON.stringify({ signedPayload: `${'a'.repeat(1 << 20)}.b.c` }))],
  ])('%s is signature_missing', async (_name, raw) => {
    expect(await verifyAppleAppStore({ raw, options: options(), nowSeconds: 0 })).toEqual({ ok: false, reason: 'signature_missing' });
  });

  test.each([
    ['alg none', async () => `${Buffer.from(JSON.stringify({ alg: 'none', x5c: [apple.leaf, apple.intermediate].map(derBase64) })).toString('base64url')}.${Buffer.from('{}').toString('base64url')}.AAAA`],
    ['no x5c', () => new CompactSign(Buffer.from(JSON.stringify(notification()))).setProtectedHeader({ alg: 'ES256' }).sign(createPrivateKey(apple.leafKey))],
    ['only the leaf in x5c', () => signPayload(notification(), apple, { x5c: [derBase64(apple.leaf)] })],
    ['a jwk of the signer instead', () => signPayload(notification(), foreign, { x5c: undefined, jwk: new X509Certificate(foreign.leaf).publicKey.export({ format: 'jwk' }) })],
  ])('%s is signature_invalid', async (_name, make) => {
    expect(await verify(await make())).toEqual({ ok: false, reason: 'signature_invalid' });
  });
});
