import { createHmac } from 'node:crypto';
import request from 'supertest';
import { ADMIN_TOKEN, testApp } from '../../helpers/app';
import { expectError, hookUrl, triggerInput } from '../../helpers/http';

/**
 * Smartcar (contract §10.1 D): the verify event answered with the HMAC of its challenge, and
 * deliveries signed with SC-Signature, hex HMAC-SHA256 of the raw body keyed by the application
 * management token. Smartcar's Node SDK is not installed here; requests are signed as its
 * webhook docs (and the SDK's hashChallenge / verifyPayload) say.
 */

const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
const AMT = 'a8b3a5e7-0b7a-4b4f-9c8a-3f5c2d1e0f9a';
const hex = (text: string, key = AMT) => createHmac('sha256', key).update(text).digest('hex');
const eventOf = (record: { value: string }) => JSON.parse(record.value);
// The shape of Smartcar's documented VEHICLE_STATE payload.
const EVENT = JSON.stringify({
  eventId: '5a537912-9ad3-424b-ba33-65a1704567e9',
  eventType: 'VEHICLE_STATE',
  data: { user: { id: '93b3ee5e-0b0a-4a1b-9b6b-3b3f3e1f1c2d' }, vehicle: { id: '36ab27d0-fd9d-4455-823a-ce30af709ffc', make: 'TESLA', model: 'Model 3', year: 2020 } },
  meta: { deliveryId: '48b25f8f-2c1b-4b5e-9a3f-6b7f5f8b2f71', webhookId: '123e4567-e89b-12d3-a456-426614174000', mode: 'LIVE' },
});

describe('smartcar', () => {
  const t = testApp();
  beforeAll(async () => {
    const put = await request(t.admin).put('/admin/triggers/smartcar').set(admin).send(triggerInput({ provider: { name: 'smartcar', secrets: [AMT] } as never }));
    expect(put.status).toBe(200);
  });
  const post = (body: unknown, signature?: string) => {
    const req = request(t.app).post(hookUrl('smartcar')).set('Content-Type', 'application/json');
    return (signature === undefined ? req : req.set('SC-Signature', signature)).send(typeof body === 'string' ? body : JSON.stringify(body));
  };

  it('answers the verify event, unsigned or signed, with hex HMAC-SHA256(management token, challenge); publishes nothing', async () => {
    const before = t.sink.records.length;
    const challenge = 'b2f4c2e1-7e9a-4d2c-8f3b-1a2b3c4d5e6f';
    const legacy = { version: '2.0', webhookId: '5f1c0c1e-1c5b-4b5e-9a3f-6b7f5f8b2f71', eventName: 'verify', payload: { challenge } };
    const unsigned = await post(legacy);
    expect(unsigned.status).toBe(200);
    expect(unsigned.body).toEqual({ challenge: hex(challenge) });
    const current = JSON.stringify({ eventId: 'e1', eventType: 'VERIFY', data: { challenge }, meta: { webhookId: 'w1' } });
    expect((await post(current, hex(current))).body).toEqual({ challenge: hex(challenge) });
    expect(t.sink.records).toHaveLength(before);
  });

  it('refuses a verify event with a wrong signature (401) or a challenge of another shape (400)', async () => {
    const body = JSON.stringify({ eventName: 'verify', payload: { challenge: 'abc' } });
    expect(expectError(await post(body, hex(body, 'another token')), 'UNAUTHORIZED').details.reason).toBe('signature_invalid');
    expect(expectError(await post({ eventName: 'verify', payload: { challenge: '{"eventType":"VEHICLE_STATE"}' } }), 'BAD_REQUEST').details.reason).toBe('invalid_handshake');
    expect(expectError(await post({ eventName: 'verify', payload: { challenge: 42 } }), 'BAD_REQUEST').details.reason).toBe('invalid_handshake');
  });

  it('publishes a genuine delivery by eventType under its eventId; unsigned, one changed byte, or a body that is no JSON object is 401', async () => {
    expect((await post(EVENT, hex(EVENT))).status).toBe(200);
    const event = eventOf(t.sink.records.at(-1)!);
    expect(event.data.provider).toMatchObject({ name: 'smartcar', kind: 'VEHICLE_STATE', deliveryId: '5a537912-9ad3-424b-ba33-65a1704567e9', verified: true });
    expect(event.data.headers['sc-signature']).toBeUndefined();
    expect(expectError(await post(EVENT), 'UNAUTHORIZED').details.reason).toBe('signature_missing');
    const changed = EVENT.replace('TESLA', 'TESLB');
    expect(expectError(await post(changed, hex(EVENT)), 'UNAUTHORIZED').details.reason).toBe('signature_invalid');
    // A verify answer is the MAC of its challenge: replayed as a delivery's signature over that text, it is refused.
    const oracle = await post({ eventName: 'verify', payload: { challenge: 'abc' } });
    const forged = await request(t.app).post(hookUrl('smartcar')).set('Content-Type', 'text/plain').set('SC-Signature', oracle.body.challenge).send('abc');
    expect(expectError(forged, 'UNAUTHORIZED').details.reason).toBe('signature_invalid');
  });
});
