import request from 'supertest';
import { testApp } from '../helpers/app';
import { expectError, hookUrl, triggerInput, TRIGGER_TOKEN } from '../helpers/http';

describe('webhook routing: 404 and 405 (contract §2.1, §2.2)', () => {
  const t = testApp();

  beforeAll(async () => {
    await t.addTrigger('live', triggerInput());
    await t.addTrigger('parked', triggerInput({ deployed: false }));
  });

  it('answers 404 NOT_FOUND for an unknown path', async () => {
    const res = await request(t.app).post(hookUrl('nope')).send({ a: 1 });
    expectError(res, 'NOT_FOUND');
  });

  it('answers 404 NOT_FOUND for a trigger that is not deployed, and publishes nothing', async () => {
    const res = await request(t.app).post(hookUrl('parked')).send({ a: 1 });
    expectError(res, 'NOT_FOUND');
    expect(t.sink.records).toHaveLength(0);
  });

  it('answers 404 for a path outside the allowed alphabet or length', async () => {
    expectError(await request(t.app).post(hookUrl('has.dot')).send({}), 'NOT_FOUND');
    expectError(await request(t.app).post(hookUrl('x'.repeat(129))).send({}), 'NOT_FOUND');
  });

  it.each(['get', 'put', 'delete', 'patch'] as const)('answers %s with 405 and Allow: POST on an existing path', async (method) => {
    const res = await request(t.app)[method](hookUrl('live'));
    expectError(res, 'METHOD_NOT_ALLOWED');
    expect(res.headers.allow).toBe('POST');
  });

  it.each(['get', 'put'] as const)('answers %s with the same 405 on a path that does not exist (no probing)', async (method) => {
    const existing = await request(t.app)[method](hookUrl('live'));
    const missing = await request(t.app)[method](hookUrl('does-not-exist'));
    expectError(missing, 'METHOD_NOT_ALLOWED');
    expect(missing.headers.allow).toBe('POST');
    expect(missing.body).toEqual(existing.body);
  });

  it('reaches a trigger by every spelling express matches: a query, a trailing slash, other letter case, an escape', async () => {
    // The plain spelling (with or without a query) is taken at the app's entry (src/http/app-entry.ts), the others by the router.
    const routed = jest.spyOn((t.app as unknown as { router: { handle: () => void } }).router, 'handle');
    const urls = [hookUrl('live'), `${hookUrl('live')}?source=ci`, `${hookUrl('live')}/`, '/API/Webhooks/Trigger/live', hookUrl('l%69ve')];
    for (const [i, url] of urls.entries()) {
      const before = t.sink.records.length;
      routed.mockClear();
      const res = await request(t.app).post(url).send({ url });
      expect({ url, status: res.status, eventId: res.headers['x-event-id'], router: routed.mock.calls.length }).toEqual({
        url,
        status: 200,
        eventId: expect.any(String),
        router: i < 2 ? 0 : 1,
      });
      expect(t.sink.records).toHaveLength(before + 1);
      expect(JSON.parse(t.sink.records[before].value).data).toMatchObject({ triggerPath: 'live', input: { url } });
    }
    expectError(await request(t.app).post('/API/Webhooks/Trigger/nope').send({}), 'NOT_FOUND');
    routed.mockRestore();
  });

  it('answers 405 for GET on an undeployed trigger as well', async () => {
    const res = await request(t.app).get(hookUrl('parked'));
    expectError(res, 'METHOD_NOT_ALLOWED');
    expect(res.headers.allow).toBe('POST');
  });
});

describe('webhook authentication by bearer token (contract §2.3)', () => {
  const t = testApp();

  beforeAll(async () => {
    await t.addTrigger('secured', triggerInput({ auth: { token: TRIGGER_TOKEN } }));
  });

  it('accepts the right bearer token', async () => {
    const res = await request(t.app).post(hookUrl('secured')).set('Authorization', `Bearer ${TRIGGER_TOKEN}`).send({ a: 1 });
    expect(res.status).toBe(200);
    expect(t.sink.records).toHaveLength(1);
  });

  it('accepts the scheme name in any case', async () => {
    const res = await request(t.app).post(hookUrl('secured')).set('Authorization', `bearer ${TRIGGER_TOKEN}`).send({ a: 2 });
    expect(res.status).toBe(200);
  });

  it('answers 401 without a token, with WWW-Authenticate: Bearer', async () => {
    const before = t.sink.records.length;
    const res = await request(t.app).post(hookUrl('secured')).send({ a: 1 });
    expectError(res, 'UNAUTHORIZED');
    expect(res.headers['www-authenticate']).toBe('Bearer');
    expect(t.sink.records).toHaveLength(before);
  });

  it.each([
    ['a wrong token', `Bearer ${TRIGGER_TOKEN}x`],
    ['a prefix of the token', `Bearer ${TRIGGER_TOKEN.slice(0, -1)}`],
    ['the token without the Bearer scheme', TRIGGER_TOKEN],
    ['another scheme', `Basic ${Buffer.from(`u:${TRIGGER_TOKEN}`).toString('base64')}`],
    ['an empty bearer', 'Bearer '],
  ])('answers 401 for %s', async (_name, header) => {
    const res = await request(t.app).post(hookUrl('secured')).set('Authorization', header).send({ a: 1 });
    expectError(res, 'UNAUTHORIZED');
  });

  it('checks the token before reading the body: an unauthenticated bad body is still 401', async () => {
    const res = await request(t.app).post(hookUrl('secured')).set('Content-Type', 'application/json').send('{not json');
    expectError(res, 'UNAUTHORIZED');
  });
});

describe('webhook authentication by a custom header (contract §2.3)', () => {
  const t = testApp();

  beforeAll(async () => {
    await t.addTrigger('custom', triggerInput({ auth: { token: TRIGGER_TOKEN, header: 'x-hook-auth' } }));
  });

  it('accepts the token in the named header, whatever its case', async () => {
    const res = await request(t.app).post(hookUrl('custom')).set('X-Hook-Auth', TRIGGER_TOKEN).send({ a: 1 });
    expect(res.status).toBe(200);
  });

  it('ignores a correct token sent as Authorization: Bearer when auth.header is set', async () => {
    const res = await request(t.app).post(hookUrl('custom')).set('Authorization', `Bearer ${TRIGGER_TOKEN}`).send({ a: 1 });
    expectError(res, 'UNAUTHORIZED');
    expect(res.headers['www-authenticate']).toBeUndefined();
  });

  it('answers 401 for a wrong value in the named header', async () => {
    const res = await request(t.app).post(hookUrl('custom')).set('X-Hook-Auth', 'wrong-token-value').send({ a: 1 });
    expectError(res, 'UNAUTHORIZED');
  });

  it('does not accept "Bearer <token>" in the named header', async () => {
    const res = await request(t.app).post(hookUrl('custom')).set('X-Hook-Auth', `Bearer ${TRIGGER_TOKEN}`).send({ a: 1 });
    expectError(res, 'UNAUTHORIZED');
  });
});
