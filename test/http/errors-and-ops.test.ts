import request from 'supertest';
import { ADMIN_TOKEN, testApp } from '../helpers/app';
import { expectError, hookUrl, triggerInput } from '../helpers/http';
import { accessLinesOf, parsedLines } from '../helpers/log-lines';
import { StoreUnavailableError } from '../../src/store-error';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };

describe('X-Request-Id (contract §7)', () => {
  const t = testApp({ RATE_LIMIT_DEFAULT: '1/60' });

  beforeAll(async () => {
    await t.addTrigger('rid', triggerInput());
  });

  it('is on every response: accepted, errors of each kind, unknown routes, admin and ops', async () => {
    const responses = [
      await request(t.app).post(hookUrl('rid')).send({ a: 1 }),
      await request(t.app).post(hookUrl('rid')).send({ a: 2 }), // 429
      await request(t.app).post(hookUrl('missing')).send({}),
      await request(t.app).get(hookUrl('rid')),
      await request(t.app).get('/no/such/route'),
      await request(t.admin).get('/admin/triggers'),
      await request(t.admin).get('/admin/triggers').set(admin),
      await request(t.app).get('/healthz'),
      await request(t.admin).get('/readyz'),
      await request(t.admin).get('/metrics'),
    ];
    expect(responses.map((r) => r.status)).toEqual([200, 429, 404, 405, 404, 401, 200, 200, 200, 200]);
    const ids = responses.map((r) => r.headers['x-request-id']);
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it.each(['abc-123', 'req_01HXYZ.v2:7', 'a'.repeat(128)])('echoes a safe incoming id: %s', async (id) => {
    const res = await request(t.app).get('/healthz').set('X-Request-Id', id);
    expect(res.headers['x-request-id']).toBe(id);
  });

  it.each([
    ['with spaces', 'has space'],
    ['with markup', '<script>alert(1)</script>'],
    ['too long', 'a'.repeat(129)],
    ['with a quote', 'x"y'],
  ])('replaces an unsafe incoming id (%s) with a new one', async (_name, id) => {
    const res = await request(t.app).get('/healthz').set('X-Request-Id', id);
    expect(res.headers['x-request-id']).toMatch(UUID);
  });

  it('writes one JSON log line per request with the request id, the path without its query string', async () => {
    await request(t.app).get('/healthz?verify_token=query-SECRET-1').set('X-Request-Id', 'log-check-1');
    const [line] = await accessLinesOf(t.logLines, ['log-check-1']);
    expect(parsedLines(t.logLines).filter((l) => l.reqId === 'log-check-1')).toHaveLength(1);
    expect(line).toMatchObject({ msg: 'request', method: 'GET', path: '/healthz', status: 200, route: 'health' });
    expect(t.logLines.join('')).not.toContain('query-SECRET-1');
  });
});

describe('error bodies (contract §7)', () => {
  const t = testApp();

  it('an unknown route is 404 NOT_FOUND with exactly { error: { code, message } }', async () => {
    const res = await request(t.app).post('/api/webhooks/other').send({});
    const error = expectError(res, 'NOT_FOUND');
    expect(Object.keys(error).sort()).toEqual(['code', 'message']);
    const nested = await request(t.app).post('/api/webhooks/trigger/a/b').send({});
    expectError(nested, 'NOT_FOUND');
  });

  it('403 FORBIDDEN (reachable only on the WhatsApp handshake): a wrong verify token, in the contract\'s shape', async () => {
    await t.addChannel('wa-403', {
      provider: 'whatsapp',
      workspaceId: 'ws-1',
      inboxId: 'inbox-1',
      phoneNumberId: '123',
      verifyToken: 'verify-token-right',
      appSecret: 'app-secret-x',
    });
    const query = 'hub.mode=subscribe&hub.verify_token=verify-token-wrong&hub.challenge=1158201444';
    const res = await request(t.app).get(`/api/channels/whatsapp/wa-403?${query}`);
    expectError(res, 'FORBIDDEN');
    expect(res.text).not.toContain('1158201444');
    expect(res.text).not.toContain('verify-token');
  });

  it('a malformed percent-encoding in the path is a 400 in the contract\'s shape', async () => {
    const res = await request(t.app).post('/api/webhooks/trigger/%E0%A4%A').send({});
    expectError(res, 'BAD_REQUEST');
  });

  it('an unexpected failure is 500 INTERNAL_ERROR with no stack, file path or message of the cause', async () => {
    const t2 = testApp();
    t2.registry.triggers.list = async () => {
      throw new Error('ECONNRESET at /srv/app/src/registry/secret-file.ts:12:3 password=hunter2');
    };
    const res = await request(t2.admin).get('/admin/triggers').set(admin);
    const error = expectError(res, 'INTERNAL_ERROR');
    expect(res.body).toEqual({ error: { code: 'INTERNAL_ERROR', message: 'internal error' } });
    expect(res.text).not.toContain('hunter2');
    expect(res.text).not.toContain('ECONNRESET');
    expect(error.details).toBeUndefined();
    // The error is logged before the answer is sent; the access line (after it) says it is all there.
    await accessLinesOf(t2.logLines, [res.headers['x-request-id']]);
    const logged = parsedLines(t2.logLines).filter((l) => l.msg === 'unexpected error');
    expect(logged).toHaveLength(1);
    expect(logged[0].reqId).toBe(res.headers['x-request-id']);
  });

  it('a registry that cannot answer is 503 with Retry-After (never a 404)', async () => {
    const t2 = testApp();
    t2.registry.triggers.get = async () => {
      throw new StoreUnavailableError('registry down');
    };
    const res = await request(t2.app).post(hookUrl('any')).send({});
    expect(expectError(res, 'SERVICE_UNAVAILABLE').details).toEqual({ reason: 'registry_unavailable' });
    expect(res.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
    expect(res.text).not.toContain('registry down');
  });

  it('an idempotency store failure: 503 with IDEMPOTENCY_ON_STORE_ERROR=refuse, accepted (unguarded) with accept', async () => {
    const failClaim = async () => {
      throw new Error('store down');
    };
    const refuse = testApp({ IDEMPOTENCY_ON_STORE_ERROR: 'refuse' });
    await refuse.addTrigger('s', triggerInput());
    refuse.deps.idempotency.claim = failClaim;
    const refused = await request(refuse.app).post(hookUrl('s')).set('Idempotency-Key', 'k').send({ a: 1 });
    expect(expectError(refused, 'SERVICE_UNAVAILABLE').details).toEqual({ reason: 'store_unavailable' });
    expect(refused.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
    expect(refuse.sink.records).toHaveLength(0);

    const accept = testApp({ IDEMPOTENCY_ON_STORE_ERROR: 'accept' });
    await accept.addTrigger('s', triggerInput());
    accept.deps.idempotency.claim = failClaim;
    const accepted = await request(accept.app).post(hookUrl('s')).set('Idempotency-Key', 'k').send({ a: 1 });
    expect(accepted.status).toBe(200);
    expect(accept.sink.events()[0].data.idempotencyKey).toBe('k');
  });
});

describe('/healthz and /readyz (contract §9)', () => {
  const t = testApp();

  afterEach(() => {
    t.sink.mode = 'ack';
    t.deps.lifecycle.draining = false;
    t.deps.lifecycle.started = true;
  });

  it('/healthz answers 200', async () => {
    const res = await request(t.app).get('/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('/readyz answers 200 with each dependency up', async () => {
    const res = await request(t.admin).get('/readyz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ready', checks: { sink: 'up' } });
  });

  it('/readyz stays 200 while the sink (a dependency every pod shares) is down, and reports it in the body', async () => {
    t.sink.mode = 'fail';
    const res = await request(t.admin).get('/readyz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'ready',
      checks: { sink: 'down' },
      details: { sink: { error: 'capture sink is down' } },
    });
    expect(res.headers['retry-after']).toBeUndefined();
    expect((await request(t.app).get('/healthz')).status).toBe(200);
  });

  it('/readyz answers 503 "draining" while the process drains, and responses ask to close the connection', async () => {
    t.deps.lifecycle.draining = true;
    const res = await request(t.admin).get('/readyz');
    const error = expectError(res, 'SERVICE_UNAVAILABLE');
    expect(error.details).toEqual({ reason: 'closed', status: 'draining', checks: { sink: 'up' } });
    expect(error.message).toContain('draining');
    expect(res.headers['retry-after']).toBe('1');
    expect(res.headers.connection).toBe('close');
  });

  it('/readyz answers 503 "starting" before the process has started', async () => {
    t.deps.lifecycle.started = false;
    const res = await request(t.admin).get('/readyz');
    expect(expectError(res, 'SERVICE_UNAVAILABLE').details).toEqual({ reason: 'starting', status: 'starting', checks: { sink: 'up' } });
  });

  it('draining with the sink down: 503 for draining only, the sink reported in the body', async () => {
    t.sink.mode = 'fail';
    t.deps.lifecycle.draining = true;
    const res = await request(t.admin).get('/readyz');
    expect(expectError(res, 'SERVICE_UNAVAILABLE').details).toMatchObject({ reason: 'closed', status: 'draining', checks: { sink: 'down' } });
  });
});

describe('/metrics (contract §9)', () => {
  const t = testApp();

  it('counts requests by route and outcome, with a latency histogram', async () => {
    await t.addTrigger('m', triggerInput({ auth: { token: 'metrics-token-1' } }));
    expect((await request(t.app).post(hookUrl('m')).set('Authorization', 'Bearer metrics-token-1').send({ a: 1 })).status).toBe(200);
    expect((await request(t.app).post(hookUrl('m')).set('Authorization', 'Bearer metrics-token-1').send({ a: 1 })).status).toBe(200);
    expect((await request(t.app).post(hookUrl('m')).send({ a: 1 })).status).toBe(401);
    expect((await request(t.app).get(hookUrl('m'))).status).toBe(405);

    const res = await request(t.admin).get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    const text = res.text;
    const sample = (labels: string) => {
      const line = text.split('\n').find((l) => l.startsWith(`igw_http_requests_total{${labels}}`));
      return line === undefined ? undefined : Number(line.split(' ').pop());
    };
    expect(sample('route="webhook",outcome="accepted",reason="accepted",status="200"')).toBe(1);
    expect(sample('route="webhook",outcome="duplicate",reason="duplicate",status="200"')).toBe(1);
    expect(sample('route="webhook",outcome="unauthorized",reason="credentials_invalid",status="401"')).toBe(1);
    expect(sample('route="webhook",outcome="method_not_allowed",reason="method_not_allowed",status="405"')).toBe(1);
    expect(text).toMatch(/^igw_http_request_duration_seconds_bucket\{le="[^"]+",route="webhook",outcome="accepted"\} \d+$/m);
    expect(text).toMatch(/^igw_events_published_total\{type="webhook.trigger"\} 1$/m);
    expect(text).not.toContain('metrics-token-1');
  });
});
