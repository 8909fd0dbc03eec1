import { shopify } from '../../../src/providers/shopify';
import { accepted, check, refusedWith, tampered } from './support';

// Published vector: Shopify/shopify-app-js, packages/apps/shopify-api/lib/webhooks/__tests__/validate.test.ts
// ("returns true for valid request": rawBody '{"foo": "bar"}', hmac below) with apiSecretKey 'test_secret_key'
// from packages/apps/shopify-api/lib/__tests__/test-config.ts.
const SECRET = 'test_secret_key';
const BODY = '{"foo": "bar"}';
const HMAC = 'B23tXN681gZ0qIWNRrgtzBE9XSDo5yaUu6wfmhu3a7g=';

describe('shopify preset', () => {
  it('accepts the published vector in the X-Shopify-* family and refuses one changed byte', () => {
    const headers = { 'x-shopify-hmac-sha256': HMAC, 'x-shopify-topic': 'products/create', 'x-shopify-webhook-id': '123456789' };
    expect(check(shopify, { raw: BODY, headers, secrets: [SECRET] })).toMatchObject(accepted);
    expect(check(shopify, { raw: tampered(BODY), headers, secrets: [SECRET] })).toEqual(refusedWith('signature_invalid'));
  });

  it('trap: accepts the lower-case shopify-* family of "events" deliveries', () => {
    const headers = { 'shopify-hmac-sha256': HMAC, 'shopify-topic': 'orders/create', 'shopify-event-id': 'ev-1' };
    expect(check(shopify, { raw: BODY, headers, secrets: [SECRET] })).toMatchObject(accepted);
    expect(shopify.kind(headers, {})).toBe('orders/create');
    expect(shopify.deliveryId(headers, {})).toBe('ev-1');
  });

  it('trap: dedupes on X-Shopify-Event-Id rather than the webhook id when both are sent', () => {
    expect(shopify.deliveryId({ 'x-shopify-event-id': 'event', 'x-shopify-webhook-id': 'hook' }, {})).toBe('event');
    expect(shopify.deliveryId({ 'x-shopify-webhook-id': 'hook' }, {})).toBe('hook');
  });

  it('accepts with the second secret (admin-created webhooks are signed with another key)', () => {
    expect(check(shopify, { raw: BODY, headers: { 'x-shopify-hmac-sha256': HMAC }, secrets: ['app-secret', SECRET] })).toMatchObject(accepted);
  });

  it.each([
    ['no header', {}, 'signature_missing'],
    ['hex instead of base64', { 'x-shopify-hmac-sha256': Buffer.from(HMAC, 'base64').toString('hex') }, 'signature_missing'],
  ])('refuses %s', (_label, h, reason) => {
    expect(check(shopify, { raw: BODY, headers: h, secrets: [SECRET] })).toEqual(refusedWith(reason));
  });
});
