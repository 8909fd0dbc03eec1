import { linear } from '../../../src/providers/linear';
import { accepted, check, refusedWith, tampered } from './support';

// Linear publishes no fixed vector; its SDK (linear/linear packages/sdk/src/webhooks/client.ts) verifies a hex
// HMAC-SHA256 of the raw body and |now - webhookTimestamp| <= 60 s. Vector computed outside Node:
//   printf '%s' "$BODY" | openssl dgst -sha256 -hmac lin_wh_secret
const SECRET = 'lin_wh_secret';
const BODY = '{"action":"create","type":"Issue","data":{"id":"2174add1-f7c8-44e3-bbf3-2d60b5ea8bc9","title":"Bug"},"organizationId":"org-1","webhookTimestamp":1700000000123,"webhookId":"wh-1"}';
const SIGNATURE = '6af62c58ce8ec7d9119ceb4b8a3faf08445af0115b2114e7ca8726b29624ddd1';
const AT = 1700000000;
const headers = { 'linear-signature': SIGNATURE, 'linear-delivery': 'del-1', 'linear-event': 'Issue' };

describe('linear preset', () => {
  it('accepts the vector and refuses one changed byte', () => {
    expect(check(linear, { raw: BODY, headers, secrets: [SECRET], now: AT })).toMatchObject(accepted);
    expect(check(linear, { raw: tampered(BODY), headers, secrets: [SECRET], now: AT })).toEqual(refusedWith('signature_invalid'));
  });

  it('trap: the tolerance is 60 s on the signed body field webhookTimestamp (ms), both ways, the header ignored', () => {
    expect(linear.defaultToleranceSeconds).toBe(60);
    expect(check(linear, { raw: BODY, headers, secrets: [SECRET], now: AT + 60 })).toMatchObject(accepted);
    expect(check(linear, { raw: BODY, headers, secrets: [SECRET], now: AT + 61 })).toEqual(refusedWith('timestamp_out_of_tolerance'));
    expect(check(linear, { raw: BODY, headers, secrets: [SECRET], now: AT - 61 })).toEqual(refusedWith('timestamp_out_of_tolerance'));
    const freshHeader = { ...headers, 'linear-timestamp': String((AT + 1000) * 1000) };
    expect(check(linear, { raw: BODY, headers: freshHeader, secrets: [SECRET], now: AT + 1000 })).toEqual(refusedWith('timestamp_out_of_tolerance'));
  });

  it('refuses a signed body without webhookTimestamp as timestamp_missing, whatever Linear-Timestamp says', () => {
    // Signed with the real secret (openssl dgst -sha256 -hmac lin_wh_secret), but no webhookTimestamp in it.
    const body = '{"action":"create","type":"Issue","data":{"id":"i-1"},"webhookId":"wh-1"}';
    const signature = '48e1557f40c37a3b0f4c2fe63e6fb4b014896045b3b6aa8372db608d38dea474';
    const fresh = { 'linear-signature': signature, 'linear-timestamp': String(AT * 1000) };
    expect(check(linear, { raw: body, headers: fresh, secrets: [SECRET], now: AT })).toEqual(refusedWith('timestamp_missing'));
  });

  it('reads type.action and Linear-Delivery', () => {
    expect(linear.kind({}, JSON.parse(BODY))).toBe('Issue.create');
    expect(linear.deliveryId(headers, {})).toBe('del-1');
  });
});
