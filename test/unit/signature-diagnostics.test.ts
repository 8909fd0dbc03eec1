import { createHash } from 'node:crypto';
import Stripe from 'stripe';
import { Webhook as SvixWebhook } from 'svix';
import { signatureDiagnostics, type SchemeShape } from '../../src/providers/diagnostics';

/** Contract §13: the shape of what a sender signed, never a secret or a signature value. */
const BODY = Buffer.from('{"id":"evt_1","type":"invoice.paid"}');
const shape = (scheme: string, signatureHeaders: string[], extra: Partial<SchemeShape> = {}): SchemeShape => ({
  scheme,
  signatureHeaders,
  secrets: 1,
  toleranceSeconds: 300,
  ...extra,
});

describe('signatureDiagnostics', () => {
  it('reads a Stripe header signed by the stripe SDK: its t= timestamp and its v1 signature', () => {
    const secret = 'whsec_test_secret_for_diagnostics';
    const timestamp = 1_700_000_000;
    const header = new Stripe('sk_test_unused').webhooks.generateTestHeaderString({ payload: BODY.toString(), secret, timestamp });
    const result = signatureDiagnostics(shape('stripe', ['stripe-signature']), { 'stripe-signature': `${header},v0=${'0'.repeat(64)}` }, { raw: BODY, nowSeconds: timestamp + 400 });
    expect(result).toEqual({
      scheme: 'stripe',
      headerSeen: 'stripe-signature',
      signaturesInHeader: 2,
      encodingLooksLike: 'hex',
      timestamp,
      skewSeconds: 400,
      toleranceSeconds: 300,
      secretsTried: 1,
      bodySha256: createHash('sha256').update(BODY).digest('hex'),
      bodyBytes: BODY.length,
    });
    expect(JSON.stringify(result)).not.toContain(header.split('v1=')[1]);
    expect(JSON.stringify(result)).not.toContain(secret);
  });

  it('reads svix-* headers signed by the svix SDK, with two secrets tried', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const at = new Date(1_700_000_000_000);
    const signature = new SvixWebhook(secret).sign('msg_1', at, BODY.toString());
    const headers = { 'svix-id': 'msg_1', 'svix-timestamp': '1700000000', 'svix-signature': signature };
    const result = signatureDiagnostics(shape('standard-webhooks', ['webhook-signature', 'svix-signature'], { secrets: 2 }), headers, { raw: BODY, nowSeconds: 1_699_999_000 });
    expect(result).toMatchObject({ headerSeen: 'svix-signature', signaturesInHeader: 1, encodingLooksLike: 'base64', timestamp: 1_700_000_000, skewSeconds: -1000, secretsTried: 2 });
    expect(JSON.stringify(result)).not.toContain(signature.slice(3));
  });

  it('calls a signature that is neither hex nor base64 "other", and counts none when no header is there', () => {
    expect(signatureDiagnostics(shape('hmac', ['x-sig']), { 'x-sig': 'sha256=n*t:h3x!' }, { nowSeconds: 0 })).toMatchObject({ signaturesInHeader: 1, encodingLooksLike: 'other' });
    expect(signatureDiagnostics(shape('hmac', ['x-sig']), { 'content-length': '12' }, { nowSeconds: 0 })).toEqual({
      scheme: 'hmac',
      headerSeen: null,
      signaturesInHeader: 0,
      encodingLooksLike: 'other',
      secretsTried: 1,
      // Refused on its headers: the body was not read (contract §13 lists the key on every refusal).
      bodySha256: null,
      bodyBytes: 12,
    });
  });

  it('reads the timestamp header the generic hmac scheme names', () => {
    const result = signatureDiagnostics(shape('hmac', ['x-sig'], { timestampHeader: 'X-Stamp' }), { 'x-sig': 'ab'.repeat(32), 'x-stamp': '100' }, { nowSeconds: 160 });
    expect(result).toMatchObject({ timestamp: 100, skewSeconds: 60, toleranceSeconds: 300, encodingLooksLike: 'hex' });
  });
});
