import request from 'supertest';
import { ADMIN_TOKEN, testApp } from '../helpers/app';
import { expectError, hookUrl, triggerInput } from '../helpers/http';

/**
 * Okta event hooks (contract §10.D): the one-time GET verification and deliveries both carry
 * the hook's static token in its authentication header. Okta ships no verifier, so requests are
 * shaped as its event hook documentation shows them.
 */

const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
const TOKEN = 'Basic b2t0YS1ob29rOnMzY3JldC12YWx1ZQ==';
const eventOf = (record: { value: string }) => JSON.parse(record.value);

describe('okta', () => {
  const t = testApp();
  beforeAll(async () => {
    const put = (path: string, provider: Record<string, unknown>) => request(t.admin).put(`/admin/triggers/${path}`).set(admin).send(triggerInput({ provider: provider as never }));
    expect((await put('okta', { name: 'okta', secrets: [TOKEN] })).status).toBe(200);
    expect((await put('okta-custom', { name: 'okta', secrets: ['x-token-value'], options: { header: 'X-Okta-Hook-Token' } })).status).toBe(200);
  });
  const verify = (path: string, challenge: string, headers: Record<string, string>) =>
    request(t.app).get(hookUrl(path)).set('X-Okta-Verification-Challenge', challenge).set(headers);

  it('answers the GET verification with {"verification"} when the token matches, publishing nothing', async () => {
    const before = t.sink.records.length;
    const res = await verify('okta', 'X5mRiC6lsqRXlzlUqxgpcJwNVNEzY9j4yLoRaWpAcQ0', { Authorization: TOKEN });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ verification: 'X5mRiC6lsqRXlzlUqxgpcJwNVNEzY9j4yLoRaWpAcQ0' });
    const custom = await verify('okta-custom', 'abc', { 'X-Okta-Hook-Token': 'x-token-value' });
    expect(custom.body).toEqual({ verification: 'abc' });
    expect(t.sink.records).toHaveLength(before);
  });

  it('refuses the verification without the token (401 signature_missing), with a wrong one (401 signature_invalid), and a challenge of another shape (400)', async () => {
    expect(expectError(await verify('okta', 'abc', {}), 'UNAUTHORIZED').details.reason).toBe('signature_missing');
    expect(expectError(await verify('okta', 'abc', { Authorization: 'Basic wrong' }), 'UNAUTHORIZED').details.reason).toBe('signature_invalid');
    expect(expectError(await verify('okta', 'a b<c>', { Authorization: TOKEN }), 'BAD_REQUEST').details.reason).toBe('invalid_handshake');
    // Without the challenge header, a GET is no handshake: 405 as on any trigger.
    expect((await request(t.app).get(hookUrl('okta')).set('Authorization', TOKEN)).status).toBe(405);
  });

  it('publishes a delivery carrying the token by its first event type, under its eventId, without the token', async () => {
    const body = JSON.stringify({
      eventType: 'com.okta.event_hook',
      eventTypeVersion: '1.0',
      cloudEventsVersion: '0.1',
      source: 'https://example.okta.com/api/v1/eventHooks/whoql0HfiLGPWc8Hp0g4',
      eventId: 'tpnSoCxSTY2z5LIBp3hUDg',
      data: { events: [{ uuid: '4294ff8e-50ac-11e9-8d7e-6b6e2a1a3f6b', published: '2019-03-27T16:59:53.032Z', eventType: 'user.session.start', severity: 'INFO' }] },
      eventTime: '2019-03-27T16:59:53.032Z',
      contentType: 'application/json',
    });
    const res = await request(t.app).post(hookUrl('okta')).set('Content-Type', 'application/json').set('Authorization', TOKEN).send(body);
    expect(res.status).toBe(200);
    const event = eventOf(t.sink.records.at(-1)!);
    expect(event.data.provider).toEqual({ name: 'okta', kind: 'user.session.start', deliveryId: 'tpnSoCxSTY2z5LIBp3hUDg', verified: true, authenticates: 'sender' });
    expect(JSON.stringify(event)).not.toContain('b2t0YS1ob29r');
    const wrong = await request(t.app).post(hookUrl('okta')).set('Content-Type', 'application/json').set('Authorization', 'Basic nope').send(body);
    expect(expectError(wrong, 'UNAUTHORIZED').details.reason).toBe('signature_invalid');
  });
});
