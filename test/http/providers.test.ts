import request from 'supertest';
import Stripe from 'stripe';
import { ADMIN_TOKEN, testApp } from '../helpers/app';
import { expectError, hookUrl, triggerInput, TRIGGER_TOKEN } from '../helpers/http';
import { nowSeconds, opensslHmac } from '../fixtures/providers/openssl';

// Published vectors (see test/unit/providers/*): octokit/webhooks-methods.js test/verify.test.ts.
const GITHUB_SECRET = 'mysecret';
const GITHUB_BODY = '{"foo":"bar"}';
const GITHUB_SIGNATURE = 'sha256=4864d2759938a15468b5df9ade20bf161da9b4f737ea61794142f3484236bda3';

const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
const eventOf = (record: { value: string }) => JSON.parse(record.value);

function github(path: string, event = 'push', delivery = 'guid-1', signature = GITHUB_SIGNATURE) {
  return (app: Parameters<typeof request>[0]) =>
    request(app)
      .post(hookUrl(path))
      .set('Content-Type', 'application/json')
      .set('X-GitHub-Event', event)
      .set('X-GitHub-Delivery', delivery)
      .set('X-Hub-Signature-256', signature)
      .send(GITHUB_BODY);
}

describe('a GitHub trigger (contract §10)', () => {
  const t = testApp();
  beforeAll(async () => {
    await t.addTrigger('gh', triggerInput({ provider: { name: 'github', secrets: [GITHUB_SECRET] } }));
    await t.addTrigger('gh-push', triggerInput({ provider: { name: 'github', secrets: [GITHUB_SECRET], events: ['push', '!pull_request.*'] } }));
    await t.addTrigger('gh-limited', triggerInput({ provider: { name: 'github', secrets: [GITHUB_SECRET] }, rateLimit: { limit: 2, windowSeconds: 60 } }));
  });

  it('publishes a signed delivery with data.provider, without the signature header', async () => {
    const res = await github('gh', 'push', 'guid-publish')(t.app);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: 'Webhook processed', eventId: res.headers['x-event-id'] });
    const event = eventOf(t.sink.records.at(-1)!);
    expect(event.data.provider).toEqual({ name: 'github', kind: 'push', deliveryId: 'guid-publish', verified: true, authenticates: 'body' });
    expect(event.data.idempotencyKey).toBe('guid-publish');
    expect(event.data.headers['x-hub-signature-256']).toBeUndefined();
    expect(JSON.stringify(event)).not.toContain(GITHUB_SIGNATURE.slice(7));
    expect(event.data.headers['x-github-event']).toBe('push');
  });

  it('answers a redelivery (same GUID) as a replay and publishes nothing more', async () => {
    const first = await github('gh', 'push', 'guid-redeliver')(t.app);
    const before = t.sink.records.length;
    const again = await github('gh', 'push', 'guid-redeliver')(t.app);
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['x-event-id']).toBe(first.headers['x-event-id']);
    expect(t.sink.records).toHaveLength(before);
  });

  it.each([
    ['a body changed by one byte', (r: request.Test) => r.send('{"foo":"baz"}'), 'signature_invalid'],
    ['no signature', (r: request.Test) => r.set('X-Hub-Signature-256', '').send(GITHUB_BODY), 'signature_missing'],
    ['a malformed signature', (r: request.Test) => r.set('X-Hub-Signature-256', 'sha256=xyz').send(GITHUB_BODY), 'signature_missing'],
  ])('answers 401 for %s and publishes nothing', async (_label, shape, reason) => {
    const before = t.sink.records.length;
    const base = request(t.app)
      .post(hookUrl('gh'))
      .set('Content-Type', 'application/json')
      .set('X-GitHub-Event', 'push')
      .set('X-Hub-Signature-256', GITHUB_SIGNATURE);
    const res = await shape(base);
    expect(expectError(res, 'UNAUTHORIZED').details).toEqual({ reason });
    expect(t.sink.records).toHaveLength(before);
  });

  it('does not charge refused deliveries against the trigger quota', async () => {
    for (let i = 0; i < 5; i++) {
      const forged = await github('gh-limited', 'push', `forged-${i}`, `sha256=${'0'.repeat(64)}`)(t.app);
      expect(forged.status).toBe(401);
    }
    expect((await github('gh-limited', 'push', 'ok-1')(t.app)).status).toBe(200);
    expect((await github('gh-limited', 'push', 'ok-2')(t.app)).status).toBe(200);
    expect((await github('gh-limited', 'push', 'ok-3')(t.app)).status).toBe(429);
  });

  it('answers 200 "ignored" for a kind the events globs filter out, publishes nothing and counts it', async () => {
    const before = t.sink.records.length;
    const res = await github('gh-push', 'issues', 'guid-ignored')(t.app);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: 'Webhook event ignored', kind: 'issues' });
    expect(t.sink.records).toHaveLength(before);
    const metrics = await t.deps.metrics.registry.getSingleMetricAsString('igw_provider_events_ignored_total');
    expect(metrics).toMatch(/igw_provider_events_ignored_total\{provider="github"\} 1/);
  });

  it('publishes a kind the events globs include', async () => {
    const res = await github('gh-push', 'push', 'guid-included')(t.app);
    expect(res.status).toBe(200);
    expect(eventOf(t.sink.records.at(-1)!).data.provider.kind).toBe('push');
  });

  it('ignores a kind only a "!" glob names, even if another glob includes it', async () => {
    await t.addTrigger('gh-not-pr', triggerInput({ provider: { name: 'github', secrets: [GITHUB_SECRET], events: ['**', '!pull_request'] } }));
    expect((await github('gh-not-pr', 'pull_request', 'guid-pr')(t.app)).body).toEqual({ message: 'Webhook event ignored', kind: 'pull_request' });
    expect((await github('gh-not-pr', 'release', 'guid-rel')(t.app)).body.message).toBe('Webhook processed');
  });

  it('answers a Slack-shaped url_verification sent to a GitHub trigger as an ordinary delivery: 401, no challenge', async () => {
    const res = await request(t.app)
      .post(hookUrl('gh'))
      .set('Content-Type', 'application/json')
      .send('{"type":"url_verification","challenge":"steal-me"}');
    expectError(res, 'UNAUTHORIZED');
    expect(res.text).not.toContain('steal-me');
  });

  it('keeps GET at 405 for a provider without a GET handshake', async () => {
    const res = await request(t.app).get(`${hookUrl('gh')}?hub.mode=subscribe&hub.challenge=1&challenge=1&crc_token=1`);
    expectError(res, 'METHOD_NOT_ALLOWED');
    expect(res.headers.allow).toBe('POST');
  });
});

describe('auth and provider combined (contract §10)', () => {
  const t = testApp();
  beforeAll(async () => {
    await t.addTrigger('both', triggerInput({ auth: { token: TRIGGER_TOKEN }, provider: { name: 'github', secrets: [GITHUB_SECRET] } }));
  });

  it('needs both the bearer token and the signature', async () => {
    expectError(await github('both')(t.app), 'UNAUTHORIZED');
    const noSignature = await request(t.app).post(hookUrl('both')).set('Authorization', `Bearer ${TRIGGER_TOKEN}`).send(GITHUB_BODY);
    expect(expectError(noSignature, 'UNAUTHORIZED').details).toEqual({ reason: 'signature_missing' });
    const ok = await github('both')(t.app).set('Authorization', `Bearer ${TRIGGER_TOKEN}`);
    expect(ok.status).toBe(200);
  });

  it('needs the token on a GET handshake too', async () => {
    await t.addTrigger('both-meta', triggerInput({ auth: { token: TRIGGER_TOKEN }, provider: { name: 'meta', secrets: ['meta-app-secret'], options: { verifyToken: 'verify-me' } } }));
    const handshake = `${hookUrl('both-meta')}?hub.mode=subscribe&hub.verify_token=verify-me&hub.challenge=1158201444`;
    const refused = await request(t.app).get(handshake);
    expectError(refused, 'UNAUTHORIZED');
    expect(refused.text).not.toContain('1158201444');
    const answered = await request(t.app).get(handshake).set('Authorization', `Bearer ${TRIGGER_TOKEN}`);
    expect(answered.status).toBe(200);
    expect(answered.text).toBe('1158201444');
  });
});

describe('a Stripe trigger signed by stripe-node', () => {
  const t = testApp();
  const secret = 'whsec_test_secret';
  const body = JSON.stringify({ id: 'evt_1', object: 'event', type: 'customer.subscription.updated', data: { object: {} } });
  beforeAll(() => t.addTrigger('stripe', triggerInput({ provider: { name: 'stripe', secrets: [secret], events: ['customer.subscription.*'] } })));

  it('publishes it with its kind and its event id as the idempotency key', async () => {
    const header = new Stripe('sk_test_unused').webhooks.generateTestHeaderString({ payload: body, secret });
    const res = await request(t.app).post(hookUrl('stripe')).set('Content-Type', 'application/json').set('Stripe-Signature', header).send(body);
    expect(res.status).toBe(200);
    const event = eventOf(t.sink.records.at(-1)!);
    expect(event.data.provider).toEqual({ name: 'stripe', kind: 'customer.subscription.updated', deliveryId: 'evt_1', verified: true, authenticates: 'body' });
    expect(event.data.headers['stripe-signature']).toBeUndefined();
  });

  it('refuses a stale signature with timestamp_out_of_tolerance', async () => {
    const header = new Stripe('sk_test_unused').webhooks.generateTestHeaderString({ payload: body, secret, timestamp: nowSeconds() - 3600 });
    const res = await request(t.app).post(hookUrl('stripe')).set('Content-Type', 'application/json').set('Stripe-Signature', header).send(body);
    expect(expectError(res, 'UNAUTHORIZED').details).toEqual({ reason: 'timestamp_out_of_tolerance' });
  });
});

describe('a Slack trigger', () => {
  const t = testApp();
  const secret = '8f742231b10e8888abcd99yyyzzz85a5';
  const slackPost = (path: string, body: string, contentType = 'application/json') => {
    const ts = String(nowSeconds());
    const signature = `v0=${opensslHmac('sha256', secret, `v0:${ts}:${body}`).toString('hex')}`;
    return request(t.app).post(hookUrl(path)).set('Content-Type', contentType).set('X-Slack-Request-Timestamp', ts).set('X-Slack-Signature', signature).send(body);
  };
  beforeAll(async () => {
    await t.addTrigger('slack', triggerInput({ provider: { name: 'slack', secrets: [secret] } }));
    await t.addTrigger('slack-mentions', triggerInput({ provider: { name: 'slack', secrets: [secret], events: ['app_mention'] } }));
  });

  it('answers the signed url_verification with its challenge and publishes nothing', async () => {
    const res = await slackPost('slack', '{"token":"t","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' });
    expect(t.sink.records).toHaveLength(0);
    // Charged like any answered request of the route (contract §6).
    expect(res.headers['x-ratelimit-limit']).toBe('600');
    expect(res.headers['x-ratelimit-remaining']).toBeDefined();
  });

  it('refuses an unsigned url_verification', async () => {
    const res = await request(t.app).post(hookUrl('slack')).set('Content-Type', 'application/json').send('{"type":"url_verification","challenge":"c"}');
    expect(expectError(res, 'UNAUTHORIZED').details).toEqual({ reason: 'signature_missing' });
  });

  it('acknowledges an event with an empty 200 and answers its retry as a replay', async () => {
    const body = '{"type":"event_callback","event_id":"Ev1","event":{"type":"app_mention","text":"hi"}}';
    const res = await slackPost('slack', body);
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    expect(res.headers['x-event-id']).toBeTruthy();
    expect(eventOf(t.sink.records.at(-1)!).data.provider).toEqual({ name: 'slack', kind: 'app_mention', deliveryId: 'Ev1', verified: true, authenticates: 'body' });
    const before = t.sink.records.length;
    const retry = await slackPost('slack', body).set('X-Slack-Retry-Num', '1').set('X-Slack-Retry-Reason', 'http_timeout');
    expect(retry.status).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(t.sink.records).toHaveLength(before);
  });

  it('reads a slash command form body and filters it out when not listed: still Slack\'s empty 200, nothing published', async () => {
    const before = t.sink.records.length;
    const form = 'command=%2Fdeploy&text=prod&trigger_id=tr-9&user_id=U1';
    const res = await slackPost('slack-mentions', form, 'application/x-www-form-urlencoded');
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    expect(t.sink.records).toHaveLength(before);
    const metrics = await t.deps.metrics.registry.getSingleMetricAsString('igw_provider_events_ignored_total');
    expect(metrics).toMatch(/igw_provider_events_ignored_total\{provider="slack"\} 1/);
  });
});

describe('a Twilio trigger behind PUBLIC_BASE_URL', () => {
  const t = testApp({ PUBLIC_BASE_URL: 'https://mycompany.com' });
  // twilio/twilio-php tests/Twilio/Unit/RequestValidatorTest.php, signed for this exact URL.
  const form = 'CallSid=CA1234567890ABCDE&Caller=%2B14158675309&Digits=1234&From=%2B14158675309&To=%2B18005551212';
  beforeAll(() => t.addTrigger('tw', triggerInput({ provider: { name: 'twilio', secrets: ['12345'] } })));

  it('verifies the public URL + sorted parameters and acknowledges with empty TwiML', async () => {
    const path = `${hookUrl('tw')}?foo=1&bar=2`;
    const signature = opensslHmac('sha1', '12345', `https://mycompany.com${path}CallSid${'CA1234567890ABCDE'}Caller+14158675309Digits1234From+14158675309To+18005551212`).toString('base64');
    const res = await request(t.app).post(path).set('Content-Type', 'application/x-www-form-urlencoded').set('X-Twilio-Signature', signature).send(form);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/xml/);
    expect(res.text).toBe('<Response></Response>');
    // The documented example carries CallSid but no CallStatus: its kind cannot be read.
    expect(eventOf(t.sink.records.at(-1)!).data.provider.kind).toBe('unknown');
  });
});

describe('handshakes (contract §10)', () => {
  const t = testApp();
  const zoomSecret = 'zoom-secret-token';
  beforeAll(async () => {
    await t.addTrigger('meta', triggerInput({ provider: { name: 'meta', secrets: ['meta-app-secret'], options: { verifyToken: 'verify-me' } } }));
    await t.addTrigger('dropbox', triggerInput({ provider: { name: 'dropbox', secrets: ['dropbox-app-secret'] } }));
    await t.addTrigger('x', triggerInput({ provider: { name: 'x', secrets: ['x-consumer-secret'] } }));
    await t.addTrigger('graph', triggerInput({ provider: { name: 'microsoft-graph', secrets: ['client-state-1'] } }));
    await t.addTrigger('zoom', triggerInput({ provider: { name: 'zoom', secrets: [zoomSecret] } }));
    await t.addTrigger('meta-parked', triggerInput({ deployed: false, provider: { name: 'meta', secrets: ['s'], options: { verifyToken: 'verify-me' } } }));
  });

  it('Meta GET: the challenge as text/plain when the verify token matches', async () => {
    const res = await request(t.app).get(`${hookUrl('meta')}?hub.mode=subscribe&hub.verify_token=verify-me&hub.challenge=1158201444`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toBe('1158201444');
  });

  it('Meta GET: 403 for a wrong verify token, 405 for a GET that is no handshake or on an undeployed trigger', async () => {
    expectError(await request(t.app).get(`${hookUrl('meta')}?hub.mode=subscribe&hub.verify_token=nope&hub.challenge=1`), 'FORBIDDEN');
    expectError(await request(t.app).get(hookUrl('meta')), 'METHOD_NOT_ALLOWED');
    // hub.* parameters make it the handshake (contract §3, as on the channel route): without hub.mode it is malformed.
    expectError(await request(t.app).get(`${hookUrl('meta')}?hub.verify_token=verify-me&hub.challenge=1`), 'BAD_REQUEST');
    expectError(await request(t.app).get(`${hookUrl('meta-parked')}?hub.mode=subscribe&hub.verify_token=verify-me&hub.challenge=1`), 'METHOD_NOT_ALLOWED');
  });

  it('Dropbox GET: the challenge echoed as text/plain with nosniff', async () => {
    const res = await request(t.app).get(`${hookUrl('dropbox')}?challenge=%3Cscript%3Ealert(1)%3C%2Fscript%3E`);
    expect(res.status).toBe(200);
    // Charged like any answered request of the route, as a channel's handshake is (contract §6).
    expect(res.headers['x-ratelimit-limit']).toBeDefined();
    expect(res.headers['x-ratelimit-remaining']).toBeDefined();
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.text).toBe('<script>alert(1)</script>');
  });

  it('X CRC GET: response_token = sha256=<base64 HMAC(consumer secret, crc_token)>', async () => {
    const res = await request(t.app).get(`${hookUrl('x')}?crc_token=crc-token-123`);
    expect(res.status).toBe(200);
    // openssl dgst -sha256 -hmac x-consumer-secret -binary | base64
    expect(res.body).toEqual({ response_token: 'sha256=YUsT0aLbF0VtFGcLCND1EU/aQP0sjPL19cPulVY7Wes=' });
  });

  it('Microsoft Graph POST ?validationToken: the decoded token as text/plain, before any body check', async () => {
    const res = await request(t.app).post(`${hookUrl('graph')}?validationToken=Validation%3A%20Testing%20client%20application%20reachability`).set('Content-Type', 'text/plain');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toBe('Validation: Testing client application reachability');
    expect(t.sink.records).toHaveLength(0);
    expect(res.headers['x-ratelimit-limit']).toBe('600');
  });

  it('Zoom endpoint.url_validation (signed): plainToken and encryptedToken', async () => {
    const body = '{"payload":{"plainToken":"qgg8vlvZRS6UYooatFL8Aw"},"event_ts":1654503849680,"event":"endpoint.url_validation"}';
    const ts = String(nowSeconds());
    const signature = `v0=${opensslHmac('sha256', zoomSecret, `v0:${ts}:${body}`).toString('hex')}`;
    const res = await request(t.app).post(hookUrl('zoom')).set('Content-Type', 'application/json').set('x-zm-request-timestamp', ts).set('x-zm-signature', signature).send(body);
    expect(res.status).toBe(200);
    // openssl: printf %s qgg8vlvZRS6UYooatFL8Aw | openssl dgst -sha256 -hmac zoom-secret-token
    expect(res.body).toEqual({ plainToken: 'qgg8vlvZRS6UYooatFL8Aw', encryptedToken: 'd9e0d764a78494688ba3f2d5c0ed4ca311394b4834d959759213424d2df961e3' });
    expect(t.sink.records).toHaveLength(0);
    expect(res.headers['x-ratelimit-limit']).toBe('600');
  });
});

describe('telegram and microsoft-graph deliveries', () => {
  const t = testApp();
  beforeAll(async () => {
    await t.addTrigger('tg', triggerInput({ provider: { name: 'telegram', secrets: ['tg-secret_1'] } }));
    await t.addTrigger('graph', triggerInput({ provider: { name: 'microsoft-graph', secrets: ['client-state-1'] } }));
  });

  it('Telegram: the secret token header checked before the body, kind = the update field', async () => {
    const body = '{"update_id":10000,"callback_query":{"id":"4382","data":"yes"}}';
    const ok = await request(t.app).post(hookUrl('tg')).set('Content-Type', 'application/json').set('X-Telegram-Bot-Api-Secret-Token', 'tg-secret_1').send(body);
    expect(ok.status).toBe(200);
    expect(eventOf(t.sink.records.at(-1)!).data.provider).toEqual({ name: 'telegram', kind: 'callback_query', deliveryId: '10000', verified: true, authenticates: 'sender' });
    const wrong = await request(t.app).post(hookUrl('tg')).set('Content-Type', 'application/json').set('X-Telegram-Bot-Api-Secret-Token', 'tg-secret_2').send(body);
    expect(expectError(wrong, 'UNAUTHORIZED').details).toEqual({ reason: 'signature_invalid' });
  });

  it('Graph: every clientState must match', async () => {
    const note = (clientState: string) => ({ subscriptionId: 's1', changeType: 'created', resource: 'Users/u1/Messages/m1', clientState, resourceData: { id: 'm1' } });
    const ok = await request(t.app).post(hookUrl('graph')).send({ value: [note('client-state-1')] });
    expect(ok.status).toBe(200);
    expect(eventOf(t.sink.records.at(-1)!).data.provider.kind).toBe('created');
    const mixed = await request(t.app).post(hookUrl('graph')).send({ value: [note('client-state-1'), note('forged')] });
    expect(expectError(mixed, 'UNAUTHORIZED').details).toEqual({ reason: 'signature_invalid' });
  });
});

describe('the admin API and the provider catalogue', () => {
  const t = testApp();

  it('stores a provider and never shows its secrets or verify token', async () => {
    const res = await request(t.admin)
      .put('/admin/triggers/meta-hook')
      .set(admin)
      .send(triggerInput({ provider: { name: 'meta', secrets: ['app-SECRET-1', 'app-SECRET-2'], events: ['whatsapp_business_account.*'], options: { verifyToken: 'vt-SECRET' } } }));
    expect(res.status).toBe(200);
    expect(res.body.data.provider).toEqual({
      name: 'meta',
      secretsSet: 2,
      events: ['whatsapp_business_account.*'],
      toleranceSeconds: 300,
      options: { verifyTokenSet: true },
    });
    const read = await request(t.admin).get('/admin/triggers/meta-hook').set(admin);
    expect(read.text).not.toMatch(/SECRET/);
  });

  it('refuses an events glob that matches no documented kind, naming it and the closest kinds', async () => {
    const res = await request(t.admin)
      .put('/admin/triggers/typo')
      .set(admin)
      .send(triggerInput({ provider: { name: 'github', secrets: ['s'], events: ['push', 'pull_requst.*'] } }));
    const error = expectError(res, 'BAD_REQUEST');
    expect(error.details).toEqual([
      expect.objectContaining({ path: 'provider.events.1', reason: 'unknown_event_kind', glob: 'pull_requst.*', closest: expect.arrayContaining([expect.stringMatching(/^pull_request/)]) }),
    ]);
    expect(await t.registry.triggers.get('typo')).toBeUndefined();
  });

  it('refuses an unknown provider, a third secret and options a preset does not take', async () => {
    for (const provider of [
      { name: 'githubb', secrets: ['s'] },
      { name: 'github', secrets: ['a', 'b', 'c'] },
      { name: 'github', secrets: ['a'], options: { header: 'x' } },
      { name: 'hmac', secrets: ['a'], options: { header: 'x-sig' } },
    ]) {
      expectError(await request(t.admin).put('/admin/triggers/bad').set(admin).send(triggerInput({ provider })), 'BAD_REQUEST');
    }
  });

  it('takes toleranceSeconds up to 3600 and refuses more, naming it (contract §10.H)', async () => {
    const put = (toleranceSeconds: number) =>
      request(t.admin).put('/admin/triggers/tolerance').set(admin).send(triggerInput({ provider: { name: 'stripe', secrets: ['whsec_x'], toleranceSeconds } }));
    expect((await put(3600)).status).toBe(200);
    const refused = await put(3601);
    expectError(refused, 'BAD_REQUEST');
    expect(JSON.stringify(refused.body.error.details)).toContain('provider.toleranceSeconds');
  });

  it('lists every preset with its event kinds, and one by name', async () => {
    const all = await request(t.admin).get('/admin/providers').set(admin);
    expect(all.status).toBe(200);
    const names = all.body.data.map((p: { name: string }) => p.name);
    expect(names).toEqual(expect.arrayContaining(['standard-webhooks', 'github', 'stripe', 'slack', 'shopify', 'twilio', 'telegram', 'gitlab', 'linear', 'zoom', 'meta', 'intercom', 'pagerduty', 'sentry', 'dropbox', 'x', 'microsoft-graph', 'hmac']));
    const one = await request(t.admin).get('/admin/providers/github').set(admin);
    expect(one.body.data).toMatchObject({ name: 'github', title: 'GitHub', handshakes: [], deliveryId: expect.stringContaining('X-GitHub-Delivery') });
    expect(one.body.data.eventKinds).toEqual(expect.arrayContaining(['push', 'pull_request.opened']));
    expectError(await request(t.admin).get('/admin/providers/nope').set(admin), 'NOT_FOUND');
    expectError(await request(t.admin).get('/admin/providers'), 'UNAUTHORIZED');
  });
});
