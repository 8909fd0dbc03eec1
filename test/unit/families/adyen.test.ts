import HmacValidator from '@adyen/api-library/lib/src/utils/hmacValidator';
import { ADYEN_SIGNED_FIELDS, verifyAdyen } from '../../../src/providers/families/adyen';

const KEY = '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056';
const OTHER_KEY = 'DFB1EB5485895CFA84146406857104ABB4CBCABDC8AAF103A624C8F6A3EAAB00';

// A standard notification item as Adyen's webhook documentation shows it.
const item = (overrides: Record<string, unknown> = {}) => ({
  additionalData: { authCode: '041807', expiryDate: '03/2030', cardSummary: '1111', cardBin: '411111', 'checkout.cardAddedBrand': 'visa' },
  amount: { currency: 'EUR', value: 1000 },
  eventCode: 'AUTHORISATION',
  eventDate: '2021-01-01T01:00:00+01:00',
  merchantAccountCode: 'YOUR_MERCHANT_ACCOUNT',
  merchantReference: 'YOUR_MERCHANT_REFERENCE',
  paymentMethod: 'visa',
  pspReference: 'YOUR_PSP_REFERENCE',
  operations: ['CANCEL', 'CAPTURE', 'REFUND'],
  success: 'true',
  ...overrides,
});

const adyen = new HmacValidator();

/** Signs an item with Adyen's library, as Adyen does, and checks that the library accepts it. */
function signed(entry: ReturnType<typeof item>, key = KEY) {
  const withSignature = { ...entry, additionalData: { ...entry.additionalData, hmacSignature: adyen.calculateHmac(entry as never, key) } };
  expect(adyen.validateHMAC(withSignature as never, key)).toBe(true);
  return withSignature;
}

const body = (...items: unknown[]) => Buffer.from(JSON.stringify({ live: 'false', notificationItems: items.map((entry) => ({ NotificationRequestItem: entry })) }));

describe('adyen (HMAC over parsed fields)', () => {
  test("an item signed by Adyen's library is accepted: kind eventCode, id pspReference:eventCode", () => {
    expect(verifyAdyen({ raw: body(signed(item())), secrets: [KEY] })).toEqual({
      ok: true,
      keySource: 'pinned',
      kind: 'AUTHORISATION',
      deliveryId: 'YOUR_PSP_REFERENCE:AUTHORISATION',
      items: [{ kind: 'AUTHORISATION', deliveryId: 'YOUR_PSP_REFERENCE:AUTHORISATION' }],
    });
  });

  test('an item with originalReference (a refund) is accepted; the key is hex in either case', () => {
    const refund = signed(item({ eventCode: 'REFUND', originalReference: '9913333333333333', pspReference: '9914444444444444' }));
    expect(verifyAdyen({ raw: body(refund), secrets: [KEY.toLowerCase()] })).toMatchObject({ ok: true, deliveryId: '9914444444444444:REFUND' });
  });

  test('the second key verifies while rotating', () => {
    expect(verifyAdyen({ raw: body(signed(item(), OTHER_KEY)), secrets: [KEY, OTHER_KEY] })).toMatchObject({ ok: true });
    expect(verifyAdyen({ raw: body(signed(item(), OTHER_KEY)), secrets: [KEY] })).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  test.each([
    ['amount.value', { amount: { currency: 'EUR', value: 1 } }],
    ['amount.currency', { amount: { currency: 'USD', value: 1000 } }],
    ['success', { success: 'false' }],
    ['eventCode', { eventCode: 'CANCELLATION' }],
    ['merchantReference', { merchantReference: 'other' }],
  ])('a changed signed field (%s) is signature_invalid, as Adyen’s library says', (_field, change) => {
    const forged = { ...signed(item()), ...change };
    expect(adyen.validateHMAC(forged as never, KEY)).toBe(false);
    expect(verifyAdyen({ raw: body(forged), secrets: [KEY] })).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  test('a changed field outside the eight passes: only the fields are authenticated (authenticates: fields)', () => {
    const changed = { ...signed(item()), paymentMethod: 'mc', eventDate: '2030-01-01T00:00:00+01:00' };
    expect(adyen.validateHMAC(changed as never, KEY)).toBe(true);
    expect(verifyAdyen({ raw: body(changed), secrets: [KEY] })).toMatchObject({ ok: true });
    expect(ADYEN_SIGNED_FIELDS).toHaveLength(8);
  });

  test('every item of a batch must verify; the batch gets one id derived from all', () => {
    const first = signed(item());
    const second = signed(item({ pspReference: 'SECOND', eventCode: 'CAPTURE' }));
    const result = verifyAdyen({ raw: body(first, second), secrets: [KEY] });
    expect(result).toMatchObject({ ok: true, kind: 'AUTHORISATION', items: [{ deliveryId: 'YOUR_PSP_REFERENCE:AUTHORISATION' }, { deliveryId: 'SECOND:CAPTURE' }] });
    expect(result.ok && result.deliveryId).toMatch(/^adyen:[0-9a-f]{64}$/);
    expect(verifyAdyen({ raw: body(first, { ...second, success: 'false' }), secrets: [KEY] })).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  test.each([
    ['no hmacSignature', body(item())],
    ['an hmacSignature that is not base64 of 32 bytes', body({ ...item(), additionalData: { hmacSignature: 'abc' } })],
    ['not JSON', Buffer.from('eventCode=AUTHORISATION')],
    ['not an Adyen body', Buffer.from('{"hello":"world"}')],
    ['no items', Buffer.from('{"live":"false","notificationItems":[]}')],
    ['an item without amount', body({ ...signed(item()), amount: undefined })],
    ['an object where a signed field belongs', body({ ...signed(item()), merchantReference: { toString: 'x' } })],
    ['more than 100 items', body(...Array.from({ length: 101 }, () => signed(item())))],
  ])('%s is signature_missing', (_name, raw) => {
    expect(verifyAdyen({ raw, secrets: [KEY] })).toEqual({ ok: false, reason: 'signature_missing' });
  });

  test('a secret that is not hex verifies nothing', () => {
    expect(verifyAdyen({ raw: body(signed(item())), secrets: ['not hex'] })).toEqual({ ok: false, reason: 'signature_invalid' });
  });
});
