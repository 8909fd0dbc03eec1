import { createHmac } from 'node:crypto';
import request from 'supertest';
import { asana } from '../../src/providers/asana';
import { ADMIN_TOKEN, testApp } from '../helpers/app';
import { expectError, hookUrl, triggerInput } from '../helpers/http';

/**
 * Asana (contract §10.D, §10.H): the secret is learned from the first X-Hook-Secret handshake
 * inside the window after the admin PUT, stored, never returned; deliveries are then signed
 * with it. Asana ships no verifier: requests are shaped as its webhooks guide shows them.
 */

const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
const eventOf = (record: { value: string }) => JSON.parse(record.value);
const SECRET = 'b537207f20cbfa02357cf448134da559e8bd039d';

describe('asana', () => {
  const t = testApp();
  const handshake = (secret: string) => request(t.app).post(hookUrl('asana')).set('X-Hook-Secret', secret).send();
  const deliver = (body: string, secret = SECRET) =>
    request(t.app).post(hookUrl('asana')).set('Content-Type', 'application/json').set('X-Hook-Signature', createHmac('sha256', secret).update(body).digest('hex')).send(body);

  beforeAll(async () => {
    const res = await request(t.admin).put('/admin/triggers/asana').set(admin).send(triggerInput({ provider: { name: 'asana' } as never }));
    expect(res.status).toBe(200);
    expect(res.body.data.provider).toEqual({ name: 'asana', secretsSet: 0, toleranceSeconds: 300 });
  });

  it('learns the secret from the first handshake, echoes it, stores it without ever showing it, and refuses a second handshake', async () => {
    const before = t.sink.records.length;
    const first = await handshake(SECRET);
    expect(first.status).toBe(200);
    expect(first.headers['x-hook-secret']).toBe(SECRET);
    expect(t.sink.records).toHaveLength(before);
    const read = await request(t.admin).get('/admin/triggers/asana').set(admin);
    expect(read.body.data.provider).toEqual({ name: 'asana', secretsSet: 1, toleranceSeconds: 300 });
    expect(JSON.stringify(read.body)).not.toContain(SECRET);
    const second = await handshake('attacker-chosen-secret');
    // FORBIDDEN has two reasons now (sender_not_allowed, contract §10.E), so the body names it.
    expect(expectError(second, 'FORBIDDEN').details).toEqual({ reason: 'verification_failed' });
    expect(second.headers['x-hook-secret']).toBeUndefined();
  });

  it('publishes deliveries signed with the learned secret by <resource_type>.<action>, refuses another key, and takes heartbeats only when listed', async () => {
    const body = JSON.stringify({
      events: [{ user: { gid: '1123', resource_type: 'user' }, created_at: '2024-01-01T00:00:00.000Z', action: 'changed', resource: { gid: '1234', resource_type: 'task' }, parent: null, change: { field: 'name', action: 'changed' } }],
    });
    const res = await deliver(body);
    expect(res.status).toBe(200);
    expect(eventOf(t.sink.records.at(-1)!).data.provider).toEqual({
      name: 'asana',
      kind: 'task.changed',
      deliveryId: expect.stringMatching(/^asana:[0-9a-f]{64}$/),
      verified: true,
      authenticates: 'body',
    });
    expect(expectError(await deliver(body, 'another-key'), 'UNAUTHORIZED').details.reason).toBe('signature_invalid');
    const heartbeat = await deliver(JSON.stringify({ events: [] }));
    expect(heartbeat.body).toEqual({ message: 'Webhook event ignored', kind: 'heartbeat' });
  });

  it('an admin PUT re-arms the trigger: a new handshake is learned again', async () => {
    await request(t.admin).put('/admin/triggers/asana').set(admin).send(triggerInput({ provider: { name: 'asana' } as never })).expect(200);
    expect((await handshake('second-secret-after-rekey')).status).toBe(200);
    expect((await deliver(JSON.stringify({ events: [] }), 'second-secret-after-rekey')).status).toBe(200);
  });

  it('refuses a handshake outside the window after the PUT, and one whose secret has another shape', () => {
    const answer = (nowSeconds: number, secret = SECRET, options: Record<string, unknown> = { handshakeArmedAt: 1000 }) =>
      asana.handshake?.answer({ query: {}, headers: { 'x-hook-secret': secret }, body: undefined, secret: '', secrets: [], options, nowSeconds });
    expect(answer(1300)).toMatchObject({ status: 200, learnedSecret: SECRET });
    expect(answer(1301)).toBe('forbidden');
    expect(answer(1900, SECRET, { handshakeArmedAt: 1000, handshakeWindowSeconds: 900 })).toMatchObject({ status: 200 });
    expect(answer(1000, 'a secret with spaces')).toBe('invalid');
    expect(answer(1000, SECRET, {})).toBe('forbidden');
  });
});
