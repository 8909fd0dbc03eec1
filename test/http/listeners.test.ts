/**
 * Issue 9, item 11: the operator surface (/admin, /metrics, /readyz) is served on its own
 * listener (ADMIN_PORT), never on the public port that senders reach.
 */
import request from 'supertest';
import { ADMIN_TOKEN, testApp } from '../helpers/app';
import { expectError, hookUrl, triggerInput } from '../helpers/http';

describe('the public listener and the admin listener (issue 9, item 11)', () => {
  const t = testApp();
  const auth = { Authorization: `Bearer ${ADMIN_TOKEN}` };

  beforeAll(() => t.addTrigger('open', triggerInput()));

  it.each(['/admin/triggers', '/admin/channels/x', '/metrics', '/readyz', '/openapi.json'])('the public listener answers %s with 404, even with the admin token', async (path) => {
    expectError(await request(t.app).get(path).set(auth), 'NOT_FOUND');
  });

  it('the public listener serves the ingress routes and /healthz', async () => {
    expect((await request(t.app).get('/healthz')).status).toBe(200);
    expect((await request(t.app).post(hookUrl('open')).send({ a: 1 })).status).toBe(200);
  });

  it('the admin listener serves /admin, /metrics, /readyz and /healthz, and no ingress route', async () => {
    expect((await request(t.admin).get('/admin/triggers').set(auth)).status).toBe(200);
    expect((await request(t.admin).get('/metrics')).text).toContain('igw_http_requests_total');
    expect((await request(t.admin).get('/readyz')).status).toBe(200);
    expect((await request(t.admin).get('/healthz')).status).toBe(200);
    expectError(await request(t.admin).post(hookUrl('open')).send({ a: 1 }), 'NOT_FOUND');
  });

  it('without PUBLIC_BASE_URL, admin reads show URLs on the public PORT, not the admin port they were asked on', async () => {
    const res = await request(t.admin).get('/admin/triggers/open').set(auth).set('Host', 'gw.example:8081');
    expect(res.body.data.url).toBe('http://gw.example:8080/api/webhooks/trigger/open');
  });
});
