/**
 * Issue 9, item 4: guessing credentials is not free. After AUTH_FAILURE_LIMIT failed
 * authentications from one client address on one trigger, channel or the admin API, that
 * address gets 429 with Retry-After before its credential is looked at, without touching
 * the tenant's own quota.
 */
import request from 'supertest';
import { signWhatsAppBody } from '../helpers/meta-signature';
import { ADMIN_TOKEN, testApp } from '../helpers/app';
import { expectError, expectRateLimitHeaders, hookUrl, triggerInput, TRIGGER_TOKEN } from '../helpers/http';

const APP_SECRET = 'throttle-app-secret';
const VERIFY_TOKEN = 'throttle-verify-token';
const CHANNEL = '/api/channels/whatsapp/wa-guessed';
const ATTACKER = '203.0.113.66';
const OTHER_CLIENT = '198.51.100.23';

async function setUp(env: Record<string, string> = { TRUST_PROXY: 'loopback' }) {
  const t = testApp({ AUTH_FAILURE_LIMIT: '3/60', ...env });
  await t.addTrigger('guessed', triggerInput({ auth: { token: TRIGGER_TOKEN }, rateLimit: { limit: 3, windowSeconds: 60 } }));
  await t.addChannel('wa-guessed', {
    provider: 'whatsapp',
    workspaceId: 'ws-1',
    inboxId: 'inbox-1',
    phoneNumberId: '1000',
    verifyToken: VERIFY_TOKEN,
    appSecret: APP_SECRET,
  });
  return t;
}

type TestApp = Awaited<ReturnType<typeof setUp>>;

const post = (t: TestApp, from: string, token: string) =>
  request(t.app).post(hookUrl('guessed')).set('X-Forwarded-For', from).set('Authorization', `Bearer ${token}`).send({ a: 1 });

function expectThrottled(res: request.Response): void {
  const error = expectError(res, 'RATE_LIMITED');
  expect(error.details.reason).toBe('auth_throttled');
  expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(60);
  expect(new Date(error.details.retryAfter).toISOString()).toBe(error.details.retryAfter);
}

describe('failed authentications are throttled per client address (issue 9, item 4)', () => {
  it('wrong bearer tokens: 401 three times, then 429 with Retry-After, even for the right token', async () => {
    const t = await setUp();
    for (let i = 0; i < 3; i++) expectError(await post(t, ATTACKER, `guess-${i}`), 'UNAUTHORIZED');
    const wrong = await post(t, ATTACKER, 'guess-3');
    expectThrottled(wrong);
    // A right guess tells the guesser nothing: the same answer, down to the header names
    // (none of the tenant's X-RateLimit-* headers).
    const right = await post(t, ATTACKER, TRIGGER_TOKEN);
    expectThrottled(right);
    expect(Object.keys(right.headers).sort()).toEqual(Object.keys(wrong.headers).sort());
    expect(Object.keys(right.headers).filter((name) => name.startsWith('x-ratelimit'))).toEqual([]);
    expect(t.sink.records).toHaveLength(0);
  });

  it('does not touch the tenant\'s quota: another client still has all three requests of the trigger', async () => {
    const t = await setUp();
    for (let i = 0; i < 6; i++) await post(t, ATTACKER, `guess-${i}`);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await post(t, OTHER_CLIENT, TRIGGER_TOKEN);
      statuses.push(res.status);
      if (i === 0) expect(expectRateLimitHeaders(res)).toMatchObject({ limit: 3, remaining: 2 });
    }
    expect(statuses).toEqual([200, 200, 200]);
  });

  it('without TRUST_PROXY, X-Forwarded-For is not believed: a guesser cannot dodge by inventing addresses', async () => {
    const t = await setUp({});
    for (let i = 0; i < 3; i++) expectError(await post(t, `192.0.2.${i}`, `guess-${i}`), 'UNAUTHORIZED');
    expectThrottled(await post(t, '192.0.2.200', 'guess-4'));
  });

  it('counts forged WhatsApp signatures, missing ones, and wrong verify tokens on the channel', async () => {
    const t = await setUp();
    const body = '{"object":"whatsapp_business_account","entry":[]}';
    const send = (signature?: string) => {
      const req = request(t.app).post(CHANNEL).set('X-Forwarded-For', ATTACKER).set('Content-Type', 'application/json');
      return (signature ? req.set('X-Hub-Signature-256', signature) : req).send(body);
    };
    expectError(await send(), 'UNAUTHORIZED');
    expectError(await send(signWhatsAppBody(body, 'not-the-secret')), 'UNAUTHORIZED');
    const handshake = await request(t.app)
      .get(CHANNEL)
      .set('X-Forwarded-For', ATTACKER)
      .query({ 'hub.mode': 'subscribe', 'hub.verify_token': 'wrong', 'hub.challenge': '1' });
    expectError(handshake, 'FORBIDDEN');
    expectThrottled(await send(signWhatsAppBody(body, APP_SECRET)));
    const elsewhere = await request(t.app)
      .post(CHANNEL)
      .set('X-Forwarded-For', OTHER_CLIENT)
      .set('Content-Type', 'application/json')
      .set('X-Hub-Signature-256', signWhatsAppBody(body, APP_SECRET))
      .send(body);
    expect(elsewhere.status).toBe(200);
  });

  it('counts wrong admin tokens on the admin listener', async () => {
    const t = await setUp();
    const list = (token: string) => request(t.admin).get('/admin/triggers').set('X-Forwarded-For', ATTACKER).set('Authorization', `Bearer ${token}`);
    for (let i = 0; i < 3; i++) expectError(await list(`wrong-admin-token-${i}`), 'UNAUTHORIZED');
    expectThrottled(await list(ADMIN_TOKEN));
    const other = await request(t.admin).get('/admin/triggers').set('X-Forwarded-For', OTHER_CLIENT).set('Authorization', `Bearer ${ADMIN_TOKEN}`);
    expect(other.status).toBe(200);
  });

  it('is kept per target: failures on one trigger do not lock the address out of another', async () => {
    const t = await setUp();
    await t.addTrigger('neighbour', triggerInput({ auth: { token: TRIGGER_TOKEN } }));
    for (let i = 0; i < 4; i++) await post(t, ATTACKER, `guess-${i}`);
    const neighbour = await request(t.app).post(hookUrl('neighbour')).set('X-Forwarded-For', ATTACKER).set('Authorization', `Bearer ${TRIGGER_TOKEN}`).send({});
    expect(neighbour.status).toBe(200);
  });
});

describe('provider GET handshakes with a wrong verify token are failed authentications (issue 20, item 13)', () => {
  const META_TRIGGER = hookUrl('meta-guessed');

  it.each([
    ['a trigger with provider meta', META_TRIGGER],
    ['a WhatsApp channel', CHANNEL],
  ])('on %s: 40 wrong tokens are 403 up to AUTH_FAILURE_LIMIT (20), then 429 auth_throttled, even for the right token', async (_route, path) => {
    const t = await setUp({ TRUST_PROXY: 'loopback', AUTH_FAILURE_LIMIT: '20/60' });
    await t.addTrigger('meta-guessed', triggerInput({ provider: { name: 'meta', secrets: [APP_SECRET], options: { verifyToken: VERIFY_TOKEN } } }));
    const handshake = (token: string, from = ATTACKER) =>
      request(t.app).get(path).set('X-Forwarded-For', from).query({ 'hub.mode': 'subscribe', 'hub.verify_token': token, 'hub.challenge': '1158201444' });
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) statuses.push((await handshake(`wrong-${i}`)).status);
    expect(statuses).toEqual([...Array(20).fill(403), ...Array(20).fill(429)]);
    expectThrottled(await handshake(VERIFY_TOKEN));
    const elsewhere = await handshake(VERIFY_TOKEN, OTHER_CLIENT);
    expect(elsewhere.status).toBe(200);
    expect(elsewhere.text).toBe('1158201444');
  });

  // Contract §10 "one sender, one behaviour": a refused challenge counts on both routes alike.
  it.each([
    ['a trigger with provider meta', META_TRIGGER],
    ['a WhatsApp channel', CHANNEL],
  ])('on %s: a challenge refused 400 counts as a failed authentication', async (_route, path) => {
    const t = await setUp();
    await t.addTrigger('meta-guessed', triggerInput({ provider: { name: 'meta', secrets: [APP_SECRET], options: { verifyToken: VERIFY_TOKEN } } }));
    const handshake = (challenge: string) =>
      request(t.app).get(path).set('X-Forwarded-For', ATTACKER).query({ 'hub.mode': 'subscribe', 'hub.verify_token': VERIFY_TOKEN, 'hub.challenge': challenge });
    for (let i = 0; i < 3; i++) {
      expect(expectError(await handshake(`<b>${i}</b>`), 'BAD_REQUEST').details).toEqual({ reason: 'invalid_handshake' });
    }
    expectThrottled(await handshake('1158201444'));
  });
});
