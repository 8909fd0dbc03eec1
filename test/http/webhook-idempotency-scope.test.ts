/**
 * What an idempotency key stands for: the fingerprint covers everything of the request the
 * event carries (issue 10 item 1), and a key belongs to one trigger of one workflow and
 * workspace, not to a path that may be reused (issue 9 item 10).
 */
import request from 'supertest';
import { ADMIN_TOKEN, testApp } from '../helpers/app';
import { hookUrl, triggerInput } from '../helpers/http';

const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
let n = 0;

describe('the fingerprint covers the query string and the method', () => {
  const t = testApp();
  const recordsFor = (path: string) => t.sink.events().filter((e) => e.data.triggerPath === path);

  it('an empty POST to ?user=1 and then to ?user=2 within the window publishes both; ?user=1 again is a replay', async () => {
    const path = `fp-query-${++n}`;
    await t.addTrigger(path, triggerInput());
    const user1 = await request(t.app).post(`${hookUrl(path)}?user=1`);
    const user2 = await request(t.app).post(`${hookUrl(path)}?user=2`);
    expect(user1.status).toBe(200);
    expect(user2.status).toBe(200);
    expect(user2.headers['idempotent-replayed']).toBeUndefined();
    expect(user2.headers['x-event-id']).not.toBe(user1.headers['x-event-id']);
    expect(recordsFor(path).map((e) => e.data.query)).toEqual([{ user: '1' }, { user: '2' }]);

    const again = await request(t.app).post(`${hookUrl(path)}?user=1`);
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['x-event-id']).toBe(user1.headers['x-event-id']);
    expect(recordsFor(path)).toHaveLength(2);
  });

  it('parameters in another order are the same request', async () => {
    const path = `fp-order-${++n}`;
    await t.addTrigger(path, triggerInput());
    const first = await request(t.app).post(`${hookUrl(path)}?a=1&b=2`).send({ x: 1 });
    const second = await request(t.app).post(`${hookUrl(path)}?b=2&a=1`).send({ x: 1 });
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.headers['x-event-id']).toBe(first.headers['x-event-id']);
    expect(recordsFor(path)).toHaveLength(1);
  });
});

describe('a reused trigger path does not inherit the acknowledgements of the trigger it replaces', () => {
  const t = testApp();
  const recordsFor = (path: string) => t.sink.events().filter((e) => e.data.triggerPath === path);

  it.each([
    ['another workflow', { workflowId: 'wf-new' }],
    ['another workspace', { workspaceId: 'ws-new' }],
  ])('deleted through the admin API and created again for %s: the same key and body are published again', async (_what, owner) => {
    const path = `reused-${++n}`;
    expect((await request(t.admin).put(`/admin/triggers/${path}`).set(admin).send(triggerInput())).status).toBe(200);
    const first = await request(t.app).post(hookUrl(path)).set('Idempotency-Key', 'delivery-1').send({ order: 7 });
    expect(first.status).toBe(200);
    // also a fingerprinted request, whose window is 5 minutes
    expect((await request(t.app).post(hookUrl(path)).send({ order: 8 })).status).toBe(200);

    expect((await request(t.admin).delete(`/admin/triggers/${path}`).set(admin)).status).toBe(200);
    expect((await request(t.admin).put(`/admin/triggers/${path}`).set(admin).send(triggerInput(owner))).status).toBe(200);

    const second = await request(t.app).post(hookUrl(path)).set('Idempotency-Key', 'delivery-1').send({ order: 7 });
    expect(second.status).toBe(200);
    expect(second.headers['idempotent-replayed']).toBeUndefined();
    expect(second.headers['x-event-id']).not.toBe(first.headers['x-event-id']);
    const fingerprinted = await request(t.app).post(hookUrl(path)).send({ order: 8 });
    expect(fingerprinted.headers['idempotent-replayed']).toBeUndefined();

    const published = recordsFor(path).map((e) => ({ workflowId: e.data.workflowId, workspaceId: e.data.workspaceId }));
    const replaced = { workflowId: 'wf-1', workspaceId: 'ws-1' };
    const replacement = { ...replaced, ...owner };
    expect(published).toEqual([replaced, replaced, replacement, replacement]);
  });

  it('the same trigger updated in place keeps its acknowledgements (a token rotation is no reason to publish twice)', async () => {
    const path = `updated-${++n}`;
    expect((await request(t.admin).put(`/admin/triggers/${path}`).set(admin).send(triggerInput())).status).toBe(200);
    const first = await request(t.app).post(hookUrl(path)).set('Idempotency-Key', 'delivery-1').send({ order: 7 });
    const update = triggerInput({ rateLimit: { limit: 100, windowSeconds: 60 } });
    expect((await request(t.admin).put(`/admin/triggers/${path}`).set(admin).send(update)).status).toBe(200);
    const second = await request(t.app).post(hookUrl(path)).set('Idempotency-Key', 'delivery-1').send({ order: 7 });
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.headers['x-event-id']).toBe(first.headers['x-event-id']);
    expect(recordsFor(path)).toHaveLength(1);
  });
});
