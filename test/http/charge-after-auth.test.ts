/**
 * Issue 9, item 2: a tenant's rate limits are charged only for requests whose credentials
 * passed. Unsigned or wrongly signed deliveries, wrong tokens and wrong verify tokens never
 * spend a trigger's, channel's or workspace's quota.
 */
import request from 'supertest';
import { signWhatsAppBody } from '../helpers/meta-signature';
import { testApp } from '../helpers/app';
import { expectError, expectRateLimitHeaders, hookUrl, triggerInput, TRIGGER_TOKEN } from '../helpers/http';

const APP_SECRET = 'charge-app-secret';
const VERIFY_TOKEN = 'charge-verify-token';
const CHANNEL = '/api/channels/whatsapp/wa-charged';
const body = JSON.stringify({ object: 'whatsapp_business_account', entry: [] });

async function setUp(env: Record<string, string>) {
  // Failed authentications are throttled on their own (auth-throttle.test.ts); not in the way here.
  const t = testApp({ AUTH_FAILURE_LIMIT: '1000/60', ...env });
  await t.addChannel('wa-charged', {
    provider: 'whatsapp',
    workspaceId: 'ws-shared',
    inboxId: 'inbox-1',
    phoneNumberId: '1000',
    verifyToken: VERIFY_TOKEN,
    appSecret: APP_SECRET,
  });
  await t.addTrigger('same-workspace', triggerInput({ workspaceId: 'ws-shared', auth: { token: TRIGGER_TOKEN } }));
  return t;
}

describe('rate limits are charged only after authentication (issue 9, item 2)', () => {
  it('five unsigned WhatsApp POSTs against RATE_LIMIT_WORKSPACE=5/60 leave the workspace its whole quota', async () => {
    const t = await setUp({ RATE_LIMIT_WORKSPACE: '5/60' });
    for (let i = 0; i < 5; i++) {
      const unsigned = await request(t.app).post(CHANNEL).set('Content-Type', 'application/json').send(body);
      expectError(unsigned, 'UNAUTHORIZED');
      expect(unsigned.headers['x-ratelimit-remaining']).toBeUndefined();
    }
    const hook = await request(t.app).post(hookUrl('same-workspace')).set('Authorization', `Bearer ${TRIGGER_TOKEN}`).send({ a: 1 });
    expect(hook.status).toBe(200);
    expect(expectRateLimitHeaders(hook)).toMatchObject({ limit: 5, remaining: 4 });
  });

  it('wrongly signed WhatsApp POSTs (HMAC checked after the body) are not charged either', async () => {
    const t = await setUp({ RATE_LIMIT_DEFAULT: '2/60' });
    for (let i = 0; i < 4; i++) {
      const forged = await request(t.app)
        .post(CHANNEL)
        .set('Content-Type', 'application/json')
        .set('X-Hub-Signature-256', signWhatsAppBody(body, 'another-secret'))
        .send(body);
      expectError(forged, 'UNAUTHORIZED');
      expect(forged.body.error.details.reason).toBe('signature_invalid');
    }
    const signed = await request(t.app).post(CHANNEL).set('Content-Type', 'application/json').set('X-Hub-Signature-256', signWhatsAppBody(body, APP_SECRET)).send(body);
    expect(signed.status).toBe(200);
    expect(expectRateLimitHeaders(signed)).toMatchObject({ limit: 2, remaining: 1 });
  });

  it('ten wrong bearer tokens on a trigger limited to 3/min leave its three requests', async () => {
    const t = await setUp({});
    await t.addTrigger('three-a-minute', triggerInput({ auth: { token: TRIGGER_TOKEN }, rateLimit: { limit: 3, windowSeconds: 60 } }));
    for (let i = 0; i < 10; i++) {
      expectError(await request(t.app).post(hookUrl('three-a-minute')).set('Authorization', `Bearer wrong-${i}`).send({ i }), 'UNAUTHORIZED');
    }
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      statuses.push((await request(t.app).post(hookUrl('three-a-minute')).set('Authorization', `Bearer ${TRIGGER_TOKEN}`).send({ ok: i })).status);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  it('wrong verify tokens on the GET handshake are not charged; the right one is', async () => {
    const t = await setUp({ RATE_LIMIT_DEFAULT: '1/60' });
    for (let i = 0; i < 3; i++) {
      const wrong = await request(t.app).get(CHANNEL).query({ 'hub.mode': 'subscribe', 'hub.verify_token': `nope-${i}`, 'hub.challenge': '42' });
      expectError(wrong, 'FORBIDDEN');
    }
    const right = await request(t.app).get(CHANNEL).query({ 'hub.mode': 'subscribe', 'hub.verify_token': VERIFY_TOKEN, 'hub.challenge': '42' });
    expect(right.status).toBe(200);
    expect(right.text).toBe('42');
    expect(expectRateLimitHeaders(right)).toMatchObject({ limit: 1, remaining: 0 });
  });
});
