import { createHmac } from 'node:crypto';
import request from 'supertest';
import { ADMIN_TOKEN, testApp } from '../../helpers/app';
import { expectError, hookUrl, triggerInput } from '../../helpers/http';

/**
 * Worldline Connect (contract §10.1 D): the endpoint verification GET echoes
 * X-GCS-Webhooks-Endpoint-Verification as text/plain; deliveries carry X-GCS-Signature, the
 * base64 HMAC-SHA256 of the raw body with the secret key X-GCS-KeyId names. connect-sdk-nodejs
 * only verifies (and is not installed here), so requests are signed as its SignatureValidator checks.
 */

const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
const SECRET = 'Kw6jSE5o8XTl2Ct2yHwcTbGvRPFJRd1zC0SXvjDFlJ0=';
const sign = (body: string, key = SECRET) => createHmac('sha256', key).update(body).digest('base64');
const eventOf = (record: { value: string }) => JSON.parse(record.value);
// The shape of Worldline's documented payment.paid webhook event.
const EVENT = JSON.stringify({
  apiVersion: 'v1',
  id: '8ee793f6-4553-4749-85dc-f2ef095c5ab0',
  created: '2017-02-02T11:24:14.040+0100',
  merchantId: '20000',
  type: 'payment.paid',
  payment: { id: '00000200000143570012', status: 'PAID', statusOutput: { statusCategory: 'COMPLETED', statusCode: 1000 } },
});

describe('worldline', () => {
  const t = testApp();
  beforeAll(async () => {
    const put = await request(t.admin).put('/admin/triggers/worldline').set(admin).send(triggerInput({ provider: { name: 'worldline', secrets: [SECRET] } as never }));
    expect(put.status).toBe(200);
  });
  const verification = (value: string) => request(t.app).get(hookUrl('worldline')).set('X-GCS-Webhooks-Endpoint-Verification', value);

  it('echoes the endpoint verification as text/plain, publishing nothing', async () => {
    const before = t.sink.records.length;
    const res = await verification('0d2b1f5c-5d6e-4b8b-9c66-2c1c6b0b1a77');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toBe('0d2b1f5c-5d6e-4b8b-9c66-2c1c6b0b1a77');
    expect(t.sink.records).toHaveLength(before);
  });

  it('refuses a verification value of another shape (400 invalid_handshake) and a GET without it (405)', async () => {
    expect(expectError(await verification('<script>alert(1)</script>'), 'BAD_REQUEST').details.reason).toBe('invalid_handshake');
    expect(expectError(await verification('a'.repeat(129)), 'BAD_REQUEST').details.reason).toBe('invalid_handshake');
    expect((await request(t.app).get(hookUrl('worldline'))).status).toBe(405);
  });

  it('publishes a genuine delivery by its type and id, without the signature; one changed byte is 401', async () => {
    const post = (body: string, signature: string) =>
      request(t.app).post(hookUrl('worldline')).set('Content-Type', 'application/json').set('X-GCS-KeyId', 'key-1').set('X-GCS-Signature', signature).send(body);
    expect((await post(EVENT, sign(EVENT))).status).toBe(200);
    const event = eventOf(t.sink.records.at(-1)!);
    expect(event.data.provider).toMatchObject({ name: 'worldline', kind: 'payment.paid', deliveryId: '8ee793f6-4553-4749-85dc-f2ef095c5ab0', verified: true });
    expect(event.data.headers['x-gcs-signature']).toBeUndefined();
    const changed = EVENT.replace('20000', '20001');
    expect(expectError(await post(changed, sign(EVENT)), 'UNAUTHORIZED').details.reason).toBe('signature_invalid');
  });
});
