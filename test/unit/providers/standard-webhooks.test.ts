import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { createHmac } from 'node:crypto';
import { standardWebhooks } from '../../../src/providers/standard-webhooks';
import { accepted, check, refusedWith, tampered } from './support';

// Published vector: standard-webhooks/standard-webhooks, libraries/javascript/src/webhook.test.ts,
// "sign function works" (the same values are in the Go, Java, PHP and C# test suites).
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const ID = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
const TIMESTAMP = 1614265330;
const BODY = '{"test": 2432232314}';
const SIGNATURE = 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=';

const headers = (signature = SIGNATURE, timestamp = TIMESTAMP) => ({
  'webhook-id': ID,
  'webhook-timestamp': String(timestamp),
  'webhook-signature': signature,
});

describe('standard-webhooks preset', () => {
  it('accepts the published vector', () => {
    expect(check(standardWebhooks, { raw: BODY, headers: headers(), secrets: [SECRET], now: TIMESTAMP })).toMatchObject(accepted);
  });

  it('accepts the secret without its whsec_ prefix, as the reference library does', () => {
    const bare = SECRET.slice('whsec_'.length);
    expect(check(standardWebhooks, { raw: BODY, headers: headers(), secrets: [bare], now: TIMESTAMP })).toMatchObject(accepted);
  });

  it('refuses the vector with one byte of the body changed', () => {
    expect(check(standardWebhooks, { raw: tampered(BODY), headers: headers(), secrets: [SECRET], now: TIMESTAMP })).toEqual(
      refusedWith('signature_invalid'),
    );
  });

  it('trap: the key is the base64-decoded secret, so a signature keyed with the whsec_ string itself is refused', () => {
    const undecoded = createHmac('sha256', SECRET).update(`${ID}.${TIMESTAMP}.${BODY}`).digest('base64');
    expect(check(standardWebhooks, { raw: BODY, headers: headers(`v1,${undecoded}`), secrets: [SECRET], now: TIMESTAMP })).toEqual(
      refusedWith('signature_invalid'),
    );
  });

  it('accepts svix-* headers, signed by the Svix SDK', () => {
    const svix = new SvixWebhook(SECRET);
    const at = new Date(TIMESTAMP * 1000);
    const signature = svix.sign(ID, at, BODY);
    const svixHeaders = { 'svix-id': ID, 'svix-timestamp': String(TIMESTAMP), 'svix-signature': signature };
    expect(check(standardWebhooks, { raw: BODY, headers: svixHeaders, secrets: [SECRET], now: TIMESTAMP })).toMatchObject(accepted);
    expect(standardWebhooks.deliveryId(svixHeaders, {})).toBe(ID);
    // An unsigned webhook-id beside the verified svix-* family is not the delivery id.
    const forged = { ...svixHeaders, 'webhook-id': 'forged' };
    expect(check(standardWebhooks, { raw: BODY, headers: forged, secrets: [SECRET], now: TIMESTAMP })).toMatchObject(accepted);
    expect(standardWebhooks.deliveryId(forged, {})).toBe(ID);
    expect(standardWebhooks.deliveryIdFrom).toBe('signed');
  });

  it('trap: skips unknown versions (v1a, v2) in a space-separated list and finds the valid v1', () => {
    const list = ['v1a,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=', 'v2,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=', SIGNATURE].join(' ');
    expect(check(standardWebhooks, { raw: BODY, headers: headers(list), secrets: [SECRET], now: TIMESTAMP })).toMatchObject(accepted);
  });

  it('trap: during a rotation, either of two secrets verifies, and so does either of two signatures', () => {
    const next = 'whsec_' + Buffer.from('a brand new key of 24 bytes!').toString('base64');
    const sdk = new StandardWebhook(next);
    const nextSignature = sdk.sign(ID, new Date(TIMESTAMP * 1000), BODY);
    expect(check(standardWebhooks, { raw: BODY, headers: headers(nextSignature), secrets: [SECRET, next], now: TIMESTAMP })).toMatchObject({
      ok: true,
      secret: next,
    });
    const both = `${nextSignature} ${SIGNATURE}`;
    expect(check(standardWebhooks, { raw: BODY, headers: headers(both), secrets: [SECRET], now: TIMESTAMP })).toMatchObject(accepted);
  });

  it('refuses a timestamp outside the tolerance, in the past and in the future', () => {
    expect(check(standardWebhooks, { raw: BODY, headers: headers(), secrets: [SECRET], now: TIMESTAMP + 301 })).toEqual(
      refusedWith('timestamp_out_of_tolerance'),
    );
    expect(check(standardWebhooks, { raw: BODY, headers: headers(), secrets: [SECRET], now: TIMESTAMP - 301 })).toEqual(
      refusedWith('timestamp_out_of_tolerance'),
    );
    expect(check(standardWebhooks, { raw: BODY, headers: headers(), secrets: [SECRET], now: TIMESTAMP + 300 })).toMatchObject(accepted);
  });

  it('accepts a delivery signed now by the standardwebhooks SDK', () => {
    const now = new Date();
    const signature = new StandardWebhook(SECRET).sign('msg_now', now, BODY);
    const h = { 'webhook-id': 'msg_now', 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': signature };
    expect(check(standardWebhooks, { raw: BODY, headers: h, secrets: [SECRET] })).toMatchObject(accepted);
  });

  it.each([
    ['no signature header', { 'webhook-id': ID, 'webhook-timestamp': String(TIMESTAMP) }, 'signature_missing'],
    ['no id', { 'webhook-timestamp': String(TIMESTAMP), 'webhook-signature': SIGNATURE }, 'signature_missing'],
    ['a timestamp that is not a number', { ...headers(), 'webhook-timestamp': 'hello' }, 'signature_missing'],
    ['a truncated signature', headers(SIGNATURE.slice(0, 8)), 'signature_missing'],
    ['an empty v1', headers('v1,'), 'signature_missing'],
  ])('refuses %s', (_label, h, reason) => {
    expect(check(standardWebhooks, { raw: BODY, headers: h, secrets: [SECRET], now: TIMESTAMP })).toEqual(refusedWith(reason));
  });

  it('reads the kind from the body type and the delivery id from webhook-id', () => {
    expect(standardWebhooks.kind({}, { type: 'invoice.paid' })).toBe('invoice.paid');
    expect(standardWebhooks.kind({}, {})).toBe('unknown');
    expect(standardWebhooks.deliveryId(headers(), {})).toBe(ID);
  });

  it('refuses a secret that is not base64 when the trigger is saved', () => {
    expect(standardWebhooks.secretProblem?.('whsec_not base64!')).toMatch(/base64/);
    expect(standardWebhooks.secretProblem?.(SECRET)).toBeUndefined();
  });
});
