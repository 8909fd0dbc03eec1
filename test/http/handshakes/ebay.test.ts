import { createHash } from 'node:crypto';
import request from 'supertest';
import { ADMIN_TOKEN, testApp } from '../../helpers/app';
import { expectError, hookUrl, triggerInput } from '../../helpers/http';

/**
 * eBay notifications (contract §10.1 D): the endpoint challenge GET ?challenge_code= answered
 * with sha256 hex(code + verification token + endpoint), computed here as eBay's
 * event-notification-nodejs-sdk computes it (not installed here). Deliveries need a key from
 * eBay's OAuth API the gateway does not fetch: 503 key_unavailable, never 401.
 */

const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
const VERIFICATION_TOKEN = 'ebay_verification_token_0123456789abcdef0123';
const ENDPOINT = 'https://hooks.example.com/hooks/ebay';
const expected = (code: string) => createHash('sha256').update(code).update(VERIFICATION_TOKEN).update(ENDPOINT).digest('hex');

describe('ebay', () => {
  const t = testApp();
  beforeAll(async () => {
    const put = await request(t.admin).put('/admin/triggers/ebay').set(admin).send(triggerInput({ provider: { name: 'ebay', secrets: [VERIFICATION_TOKEN], options: { endpointUrl: ENDPOINT } } as never }));
    expect(put.status).toBe(200);
    expect(JSON.stringify(put.body)).not.toContain(VERIFICATION_TOKEN);
  });
  const challenge = (code: string) => request(t.app).get(hookUrl('ebay')).query({ challenge_code: code });

  it('answers the challenge with {"challengeResponse"}, publishing nothing', async () => {
    const before = t.sink.records.length;
    const res = await challenge('a8628072-3d33-45ee-9004-bee86830a22d');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ challengeResponse: expected('a8628072-3d33-45ee-9004-bee86830a22d') });
    expect(t.sink.records).toHaveLength(before);
  });

  it('refuses a challenge code of another shape (400), a GET without one (405), and an endpointUrl that is not https at PUT (400)', async () => {
    expect(expectError(await challenge('a b'), 'BAD_REQUEST').details.reason).toBe('invalid_handshake');
    expect(expectError(await challenge('x'.repeat(129)), 'BAD_REQUEST').details.reason).toBe('invalid_handshake');
    expect((await request(t.app).get(hookUrl('ebay'))).status).toBe(405);
    const plain = await request(t.admin).put('/admin/triggers/ebay-http').set(admin).send(triggerInput({ provider: { name: 'ebay', secrets: [VERIFICATION_TOKEN], options: { endpointUrl: 'http://example.com/x' } } as never }));
    expect(plain.status).toBe(400);
  });

  it('refuses a signed delivery 503 key_unavailable (nothing published) and an unsigned one 401', async () => {
    const before = t.sink.records.length;
    // eBay's documented MARKETPLACE_ACCOUNT_DELETION notification.
    const body = JSON.stringify({
      metadata: { topic: 'MARKETPLACE_ACCOUNT_DELETION', schemaVersion: '1.0', deprecated: false },
      notification: { notificationId: '49feeaeb-4982-42d9-a377-9645b8479411_33f7e043-fed8-442b-9d44-791923bd9a6d', eventDate: '2021-03-19T20:43:59.462Z', publishDate: '2021-03-19T20:43:59.679Z', publishAttemptCount: 1, data: { username: 'test_user', userId: 'ma8vp1jySJC', eiasToken: 'nY+sHZ2PrBmdj6wVnY+sEZ2PrA2dj6wJnY+gAZGEpwmdj6x9nY+seQ==' } },
    });
    const signature = Buffer.from(JSON.stringify({ alg: 'ecdsa', kid: '1d3e9fc4-5b7a-4b2c-9e0f-0a1b2c3d4e5f', signature: 'MEUCIQ', digest: 'SHA1' })).toString('base64');
    const post = (headers: Record<string, string>) => request(t.app).post(hookUrl('ebay')).set('Content-Type', 'application/json').set(headers).send(body);
    expect(expectError(await post({ 'X-EBAY-SIGNATURE': signature }), 'SERVICE_UNAVAILABLE').details.reason).toBe('key_unavailable');
    expect(expectError(await post({}), 'UNAUTHORIZED').details.reason).toBe('signature_missing');
    expect(t.sink.records).toHaveLength(before);
  });
});
