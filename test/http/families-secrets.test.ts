/**
 * The shared-secret presets of contract §10.1 D through HTTP: vonage (HS256 JWT over the body's
 * hash, @vonage/jwt accepts the token first), adyen (HMAC over parsed fields, @adyen/api-library's
 * HmacValidator signs and accepts), mailgun (HMAC over timestamp + token, claimed once; Mailgun
 * ships no Node verifier, signed as its docs say). No key is fetched for these.
 */
import { createHmac } from 'node:crypto';
import HmacValidator from '@adyen/api-library/lib/src/utils/hmacValidator';
import { verifySignature } from '@vonage/jwt';
import request from 'supertest';
import { ADMIN_TOKEN, testApp } from '../helpers/app';
import { expectError, hookUrl } from '../helpers/http';
import { eventOf, putTrigger, registerTrigger, type TestApp } from '../helpers/presets';
import { hs256, nowSeconds, rs256, rsaKey, sha256Hex, unsigned } from '../unit/families/jwt-keys';

let t: TestApp;
beforeEach(() => {
  t = testApp();
});

const post = (path: string, body: string, headers: Record<string, string> = {}) =>
  request(t.app).post(hookUrl(path)).set('Content-Type', 'application/json').set(headers).send(body);

describe('vonage preset (JWT, HS256 pinned)', () => {
  const SECRET = 'q7hQKx2w8Rf2JZtVvSb3m4N9pLk0YcDe';
  // A Messages API status callback as Vonage's API reference shows it.
  const STATUS = JSON.stringify({
    message_uuid: 'aaaaaaaa-bbbb-4ccc-8ddd-0123456789ab',
    to: '447700900000',
    from: '447700900001',
    timestamp: '2025-02-03T12:14:25Z',
    status: 'delivered',
    usage: { currency: 'EUR', price: '0.0333' },
    channel: 'sms',
  });
  const claims = (body: string, iat = nowSeconds()) => ({
    iat,
    jti: `jti-${iat}`,
    iss: 'Vonage',
    payload_hash: sha256Hex(body),
    api_key: 'a1b2c3d',
    application_id: 'aaaaaaaa-bbbb-cccc-dddd-0123456789ab',
  });

  beforeEach(() => registerTrigger(t, 'vonage', { name: 'vonage', secrets: [SECRET] }));

  it('a callback @vonage/jwt accepts is published with kind and id; its redelivery (a new token) is 2xx, nothing published', async () => {
    const token = await hs256(claims(STATUS), SECRET);
    expect(verifySignature(token, SECRET)).toBe(true);
    const res = await post('vonage', STATUS, { Authorization: `Bearer ${token}` });
    expect(res.status).toBe(200);
    expect(eventOf(t.sink.records[0]).data.provider).toEqual({
      name: 'vonage',
      kind: 'message.status.delivered',
      deliveryId: 'aaaaaaaa-bbbb-4ccc-8ddd-0123456789ab:delivered',
      verified: true,
      authenticates: 'body',
    });
    expect(JSON.stringify(t.sink.records)).not.toContain(token);
    const again = await post('vonage', STATUS, { Authorization: `Bearer ${await hs256(claims(STATUS, nowSeconds() - 5), SECRET)}` });
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(t.sink.records).toHaveLength(1);
  });

  it('one changed body byte is 401 signature_invalid; no token 401 signature_missing; alg none or RS256 refused; stale iat 401', async () => {
    const token = await hs256(claims(STATUS), SECRET);
    const changed = STATUS.replace('delivered', 'delivereq');
    expect(expectError(await post('vonage', changed, { Authorization: `Bearer ${token}` }), 'UNAUTHORIZED').details).toEqual({ reason: 'signature_invalid' });
    expect(expectError(await post('vonage', STATUS), 'UNAUTHORIZED').details).toEqual({ reason: 'signature_missing' });
    expect(expectError(await post('vonage', STATUS, { Authorization: `Bearer ${unsigned(claims(STATUS))}` }), 'UNAUTHORIZED').details).toEqual({ reason: 'signature_invalid' });
    const key = rsaKey('k');
    expect(expectError(await post('vonage', STATUS, { Authorization: `Bearer ${await rs256(key, claims(STATUS))}` }), 'UNAUTHORIZED').details).toEqual({ reason: 'signature_invalid' });
    const stale = await hs256(claims(STATUS, nowSeconds() - 400), SECRET);
    expect(expectError(await post('vonage', STATUS, { Authorization: `Bearer ${stale}` }), 'UNAUTHORIZED').details).toEqual({ reason: 'timestamp_out_of_tolerance' });
    expect(t.sink.records).toHaveLength(0);
  });
});

describe('adyen preset (HMAC over parsed fields)', () => {
  const KEY = '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056';
  const adyen = new HmacValidator();
  // A standard notification item as Adyen's webhook documentation shows it.
  const item = (overrides: Record<string, unknown> = {}) => ({
    additionalData: { authCode: '041807', expiryDate: '03/2030', cardSummary: '1111', cardBin: '411111' },
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
  function signed(entry: ReturnType<typeof item>) {
    const withSignature = { ...entry, additionalData: { ...entry.additionalData, hmacSignature: adyen.calculateHmac(entry as never, KEY) } };
    expect(adyen.validateHMAC(withSignature as never, KEY)).toBe(true);
    return withSignature;
  }
  const body = (entry: unknown) => JSON.stringify({ live: 'false', notificationItems: [{ NotificationRequestItem: entry }] });

  beforeEach(() => registerTrigger(t, 'adyen', { name: 'adyen', secrets: [KEY] }));

  it('a notification Adyen\'s library signs is answered 200 [accepted], published with authenticates "fields" and signedFields; a replay publishes nothing', async () => {
    const res = await post('adyen', body(signed(item())));
    expect(res.status).toBe(200);
    expect(res.text).toBe('[accepted]');
    const provider = eventOf(t.sink.records[0]).data.provider;
    expect(provider).toEqual({
      name: 'adyen',
      kind: 'AUTHORISATION',
      deliveryId: 'YOUR_PSP_REFERENCE:AUTHORISATION',
      verified: true,
      authenticates: 'fields',
      signedFields: ['pspReference', 'originalReference', 'merchantAccountCode', 'merchantReference', 'amount.value', 'amount.currency', 'eventCode', 'success'],
    });
    const replay = await post('adyen', body(signed(item())));
    expect(replay.status).toBe(200);
    expect(replay.text).toBe('[accepted]');
    expect(t.sink.records).toHaveLength(1);
  });

  it('a changed signed field is 401 signature_invalid; no hmacSignature or not an Adyen body is 401 signature_missing', async () => {
    const genuine = signed(item());
    const changed = { ...genuine, amount: { currency: 'EUR', value: 1001 } };
    expect(expectError(await post('adyen', body(changed)), 'UNAUTHORIZED').details).toEqual({ reason: 'signature_invalid' });
    expect(expectError(await post('adyen', body(item())), 'UNAUTHORIZED').details).toEqual({ reason: 'signature_missing' });
    expect(expectError(await post('adyen', '{"hello":"world"}'), 'UNAUTHORIZED').details).toEqual({ reason: 'signature_missing' });
    expect(t.sink.records).toHaveLength(0);
  });

  it('a body that would take more than ten times its bytes to parse is refused 401 signature_missing before it is parsed', async () => {
    const heavy = JSON.stringify({ notificationItems: [{ NotificationRequestItem: signed(item()) }], padding: Array(100_000).fill({}) });
    expect(expectError(await post('adyen', heavy), 'UNAUTHORIZED').details).toEqual({ reason: 'signature_missing' });
    expect(t.sink.records).toHaveLength(0);
  });

  it('a key that is not hex is refused at PUT', async () => {
    expect((await putTrigger(t, 'adyen-bad', { name: 'adyen', secrets: ['not-hex'] })).status).toBe(400);
  });
});

describe('mailgun preset (HMAC over timestamp + token, the token claimed once)', () => {
  const KEY = 'key-5f3a9c0e1b7d4a2f8e6c0b9d7a5f3e1c';
  // The "opened" event of Mailgun's webhook documentation, signed as it says: hex HMAC-SHA256(key, timestamp + token).
  function delivery(token: string, eventData: Record<string, unknown> = {}, timestamp = String(nowSeconds())) {
    return JSON.stringify({
      signature: { timestamp, token, signature: createHmac('sha256', KEY).update(timestamp + token).digest('hex') },
      'event-data': {
        event: 'opened',
        timestamp: 1529006854.329574,
        id: 'DACSsAdVSeGpLid7TN03WA',
        recipient: 'alice@example.com',
        ...eventData,
      },
    });
  }

  beforeEach(() => registerTrigger(t, 'mailgun', { name: 'mailgun', secrets: [KEY] }));

  it('a signed event is published with authenticates "fields"; its token under other event data is a replay: 2xx, nothing published', async () => {
    const token = 'a8ce0edb2dd8301dee6c2405235584e45aa91d1e9f979f3de0';
    const res = await post('mailgun', delivery(token));
    expect(res.status).toBe(200);
    expect(eventOf(t.sink.records[0]).data.provider).toMatchObject({ name: 'mailgun', kind: 'opened', deliveryId: 'DACSsAdVSeGpLid7TN03WA', authenticates: 'fields' });
    const captured = await post('mailgun', delivery(token, { event: 'clicked', id: 'another-event-id', recipient: 'mallory@example.com' }));
    expect(captured.status).toBe(200);
    expect(captured.headers['idempotent-replayed']).toBe('true');
    expect(t.sink.records).toHaveLength(1);
    const fresh = await post('mailgun', delivery('b9df1fec3ee9412eff7d3516346695f56bb02e2f0a080a4e01', { id: 'second-event' }));
    expect(fresh.status).toBe(200);
    expect(t.sink.records).toHaveLength(2);
  });

  it('a wrong signature is 401 signature_invalid; none is 401 signature_missing; a stale timestamp is 401', async () => {
    const genuine = JSON.parse(delivery('c0e1'));
    genuine.signature.signature = genuine.signature.signature.replace(/^./, (c: string) => (c === 'a' ? 'b' : 'a'));
    expect(expectError(await post('mailgun', JSON.stringify(genuine)), 'UNAUTHORIZED').details).toEqual({ reason: 'signature_invalid' });
    const { signature: _gone, ...unsignedBody } = JSON.parse(delivery('c0e2'));
    expect(expectError(await post('mailgun', JSON.stringify(unsignedBody)), 'UNAUTHORIZED').details).toEqual({ reason: 'signature_missing' });
    const stale = delivery('c0e3', {}, String(nowSeconds() - 400));
    expect(expectError(await post('mailgun', stale), 'UNAUTHORIZED').details).toEqual({ reason: 'timestamp_out_of_tolerance' });
    expect(t.sink.records).toHaveLength(0);
  });

  it('a body that would take more than ten times its bytes to parse is refused 401 signature_missing before it is parsed, though its triple is signed', async () => {
    // Only timestamp + token are signed: padding beside them verifies, so the cost is checked before the body is read for them.
    const heavy = JSON.stringify({ ...JSON.parse(delivery('d1f2')), padding: Array(100_000).fill({}) });
    expect(expectError(await post('mailgun', heavy), 'UNAUTHORIZED').details).toEqual({ reason: 'signature_missing' });
    expect(t.sink.records).toHaveLength(0);
  });
});

describe('the catalogue of these presets (contract §10.1 G)', () => {
  it('names family, authenticates, keys and fetches from the family facts', async () => {
    const res = await request(t.admin).get('/admin/providers').set({ Authorization: `Bearer ${ADMIN_TOKEN}` });
    const byName = new Map((res.body.data as { name: string }[]).map((entry) => [entry.name, entry]));
    expect(byName.get('aws-sns')).toMatchObject({ family: 'x509', authenticates: 'body', keys: 'none', fetches: ['sns.<region>.amazonaws.com', 'sns.<region>.amazonaws.com.cn'] });
    expect(byName.get('google-pubsub')).toMatchObject({ family: 'oidc', authenticates: 'sender', keys: 'none', fetches: ['www.googleapis.com'] });
    expect(byName.get('vonage')).toMatchObject({ family: 'jwt', authenticates: 'body', keys: 'secrets', fetches: [] });
    expect(byName.get('adyen')).toMatchObject({ family: 'fields', authenticates: 'fields', keys: 'secrets', acknowledgement: 'accepted-text', signedFields: expect.arrayContaining(['pspReference']) });
    expect(byName.get('mailgun')).toMatchObject({ family: 'fields', authenticates: 'fields', keys: 'secrets', signedFields: ['signature.timestamp', 'signature.token'] });
  });
});
