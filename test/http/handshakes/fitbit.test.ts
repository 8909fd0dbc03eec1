import { createHmac } from 'node:crypto';
import request from 'supertest';
import { ADMIN_TOKEN, testApp } from '../../helpers/app';
import { expectError, hookUrl, triggerInput } from '../../helpers/http';

/**
 * Fitbit Subscriptions API (contract §10.1 D): the subscriber check GET ?verify=<code> (204 for
 * the right code, 404 for a wrong one: Fitbit sends both) and notifications signed with
 * X-Fitbit-Signature, base64 HMAC-SHA1 of the body keyed `<client secret>&`. Fitbit ships no
 * Node SDK, so requests are signed as its subscriptions guide says.
 */

const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
const CLIENT_SECRET = 'e3c8b6a1d2f54e7b9c0a1b2c3d4e5f60';
const VERIFY_CODE = '4be1fcbe6a7e4c6a9b0e64f5d7a1f0a2c3b5e6d7f8091a2b3c4d5e6f7a8b9c0d1';
const sign = (body: string, secret = CLIENT_SECRET) => createHmac('sha1', `${secret}&`).update(body).digest('base64');
const eventOf = (record: { value: string }) => JSON.parse(record.value);
// Fitbit's documented notification body.
const BODY = JSON.stringify([{ collectionType: 'foods', date: '2020-06-01', ownerId: '228S74', ownerType: 'user', subscriptionId: '1234' }]);

describe('fitbit', () => {
  const t = testApp();
  const put = (options: unknown) =>
    request(t.admin).put('/admin/triggers/fitbit').set(admin).send(triggerInput({ provider: { name: 'fitbit', secrets: [CLIENT_SECRET], options } as never }));
  beforeAll(async () => {
    expect((await put({ verifyCode: VERIFY_CODE })).status).toBe(200);
  });
  const verify = (code: string) => request(t.app).get(hookUrl('fitbit')).query({ verify: code });

  it('answers the right verification code 204 and a wrong one 404, publishing nothing', async () => {
    const before = t.sink.records.length;
    const right = await verify(VERIFY_CODE);
    expect(right.status).toBe(204);
    expect((await verify('0'.repeat(64))).status).toBe(404);
    expect((await verify(VERIFY_CODE.slice(0, -1))).status).toBe(404);
    expect(t.sink.records).toHaveLength(before);
  });

  it('refuses a malformed check (400 invalid_handshake), a GET without ?verify (405), and a trigger without options.verifyCode at PUT (400)', async () => {
    expect(expectError(await request(t.app).get(`${hookUrl('fitbit')}?verify=a&verify=b`), 'BAD_REQUEST').details.reason).toBe('invalid_handshake');
    expect(expectError(await verify('a'.repeat(257)), 'BAD_REQUEST').details.reason).toBe('invalid_handshake');
    expect((await request(t.app).get(hookUrl('fitbit'))).status).toBe(405);
    const missing = await request(t.admin).put('/admin/triggers/fitbit-no-code').set(admin).send(triggerInput({ provider: { name: 'fitbit', secrets: [CLIENT_SECRET] } as never }));
    expect(missing.status).toBe(400);
  });

  it('acknowledges a genuine notification 204 and publishes it by collectionType; one changed byte or the bare secret as key is 401', async () => {
    const post = (body: string, signature: string) =>
      request(t.app).post(hookUrl('fitbit')).set('Content-Type', 'application/json').set('X-Fitbit-Signature', signature).send(body);
    expect((await post(BODY, sign(BODY))).status).toBe(204);
    const event = eventOf(t.sink.records.at(-1)!);
    expect(event.data.provider).toMatchObject({ name: 'fitbit', kind: 'foods', verified: true });
    expect(event.data.headers['x-fitbit-signature']).toBeUndefined();
    const changed = BODY.replace('228S74', '228S75');
    expect(expectError(await post(changed, sign(BODY)), 'UNAUTHORIZED').details.reason).toBe('signature_invalid');
    const bareKey = createHmac('sha1', CLIENT_SECRET).update(changed).digest('base64');
    expect(expectError(await post(changed, bareKey), 'UNAUTHORIZED').details.reason).toBe('signature_invalid');
    expect(expectError(await post(changed, 'not-base64!'), 'UNAUTHORIZED').details.reason).toBe('signature_missing');
  });
});
