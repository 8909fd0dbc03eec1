import Stripe from 'stripe';
import { createHmac } from 'node:crypto';
import { stripe } from '../../../src/providers/stripe';
import { accepted, check, refusedWith, tampered } from './support';

// Stripe publishes no fixed vector: deliveries are signed with the official SDK
// (stripe/stripe-node src/Webhooks.ts generateTestHeaderString, used the same way by its test/Webhook.spec.ts).
const sdk = new Stripe('sk_test_unused');
const SECRET = 'whsec_test_secret';
const BODY = JSON.stringify({ id: 'evt_test_webhook', object: 'event', type: 'customer.subscription.updated' }, null, 2);
const T = 1_700_000_000;

const sign = (payload: string, secret = SECRET, timestamp = T) =>
  sdk.webhooks.generateTestHeaderString({ payload, secret, timestamp });

describe('stripe preset', () => {
  it('accepts a delivery signed by stripe-node, and the SDK accepts it too', () => {
    const header = sign(BODY);
    expect(check(stripe, { raw: BODY, headers: { 'stripe-signature': header }, secrets: [SECRET], now: T })).toMatchObject(accepted);
    expect(() => sdk.webhooks.constructEvent(BODY, header, SECRET, 1e10)).not.toThrow();
  });

  it('refuses it with one byte of the body changed', () => {
    const header = sign(BODY);
    expect(check(stripe, { raw: tampered(BODY), headers: { 'stripe-signature': header }, secrets: [SECRET], now: T })).toEqual(
      refusedWith('signature_invalid'),
    );
  });

  it('trap: the key is the whole whsec_ string, not its base64 decoding (unlike Standard Webhooks)', () => {
    const decodedKey = Buffer.from(SECRET.slice('whsec_'.length), 'base64');
    const wrong = createHmac('sha256', decodedKey).update(`${T}.${BODY}`).digest('hex');
    expect(check(stripe, { raw: BODY, headers: { 'stripe-signature': `t=${T},v1=${wrong}` }, secrets: [SECRET], now: T })).toEqual(
      refusedWith('signature_invalid'),
    );
  });

  it('trap: while a rolled secret overlaps, several v1 entries are sent and any one passes; v0 is skipped', () => {
    const old = sign(BODY, 'whsec_old_secret').split(',')[1];
    const current = sign(BODY).split(',')[1];
    const header = `t=${T},${old},v0=deadbeef,${current}`;
    expect(check(stripe, { raw: BODY, headers: { 'stripe-signature': header }, secrets: [SECRET], now: T })).toMatchObject(accepted);
    expect(check(stripe, { raw: BODY, headers: { 'stripe-signature': header }, secrets: ['whsec_old_secret'], now: T })).toMatchObject(accepted);
  });

  it('trap: refuses a future timestamp outside the tolerance (stripe-node checks the past only)', () => {
    const header = sign(BODY, SECRET, T + 301);
    expect(check(stripe, { raw: BODY, headers: { 'stripe-signature': header }, secrets: [SECRET], now: T })).toEqual(
      refusedWith('timestamp_out_of_tolerance'),
    );
    expect(check(stripe, { raw: BODY, headers: { 'stripe-signature': sign(BODY, SECRET, T - 301) }, secrets: [SECRET], now: T })).toEqual(
      refusedWith('timestamp_out_of_tolerance'),
    );
  });

  it.each([
    ['no header', {}, 'signature_missing'],
    ['no timestamp', { 'stripe-signature': 'v1=abcd' }, 'signature_missing'],
    ['no v1', { 'stripe-signature': `t=${T},v0=abcd` }, 'signature_missing'],
    ['junk', { 'stripe-signature': 'I am not a header' }, 'signature_missing'],
  ])('refuses %s', (_label, h, reason) => {
    expect(check(stripe, { raw: BODY, headers: h, secrets: [SECRET], now: T })).toEqual(refusedWith(reason));
  });

  it('reads the kind from type and the delivery id from id', () => {
    const body = JSON.parse(BODY);
    expect(stripe.kind({}, body)).toBe('customer.subscription.updated');
    expect(stripe.deliveryId({}, body)).toBe('evt_test_webhook');
  });
});
