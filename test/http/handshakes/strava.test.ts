import request from 'supertest';
import { ADMIN_TOKEN, testApp } from '../../helpers/app';
import { expectError, hookUrl, triggerInput } from '../../helpers/http';

/**
 * Strava (contract §10.1 D): the subscription check GET ?hub.mode=subscribe&hub.challenge=…
 * &hub.verify_token=… answered {"hub.challenge"}; events are unsigned, so the callback URL the
 * operator registers carries the trigger's token (?token=<secret>). Requests as Strava's webhook
 * docs show them (Strava ships no verifier).
 */

const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
const URL_TOKEN = 'b5c0f8a2e9d14c7f8a1b2c3d4e5f6a7b';
const eventOf = (record: { value: string }) => JSON.parse(record.value);
// Strava's documented event example.
const EVENT = JSON.stringify({ aspect_type: 'update', event_time: 1516126040, object_id: 1360128428, object_type: 'activity', owner_id: 134815, subscription_id: 120475, updates: { title: 'Messy' } });

describe('strava', () => {
  const t = testApp();
  beforeAll(async () => {
    const put = await request(t.admin).put('/admin/triggers/strava').set(admin).send(triggerInput({ provider: { name: 'strava', secrets: [URL_TOKEN], options: { verifyToken: 'STRAVA' } } as never }));
    expect(put.status).toBe(200);
  });
  const check = (query: Record<string, string>) => request(t.app).get(hookUrl('strava')).query(query);
  const hub = (overrides: Record<string, string> = {}) => ({ token: URL_TOKEN, 'hub.mode': 'subscribe', 'hub.challenge': '15f7d1a91c1f40f8a748fd134752feb3', 'hub.verify_token': 'STRAVA', ...overrides });

  it('answers the subscription check with {"hub.challenge"}, publishing nothing', async () => {
    const before = t.sink.records.length;
    const res = await check(hub());
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ 'hub.challenge': '15f7d1a91c1f40f8a748fd134752feb3' });
    expect(t.sink.records).toHaveLength(before);
  });

  it('refuses a wrong verify token (403 verification_failed), a malformed check (400), and a check without the URL token (401)', async () => {
    expect(expectError(await check(hub({ 'hub.verify_token': 'WRONG' })), 'FORBIDDEN').details.reason).toBe('verification_failed');
    expect(expectError(await check(hub({ 'hub.challenge': '<b>hi</b>' })), 'BAD_REQUEST').details.reason).toBe('invalid_handshake');
    expect(expectError(await check(hub({ 'hub.mode': 'unsubscribe' })), 'BAD_REQUEST').details.reason).toBe('invalid_handshake');
    const { token: _omitted, ...withoutToken } = hub();
    expect(expectError(await check(withoutToken), 'UNAUTHORIZED').details.reason).toBe('signature_missing');
    expect(expectError(await check(hub({ token: 'wrong' })), 'UNAUTHORIZED').details.reason).toBe('signature_invalid');
    expect((await request(t.app).get(hookUrl('strava'))).status).toBe(405);
  });

  it('publishes an event posted to the URL with its token as <object_type>.<aspect_type>, never publishing the token; without it or with another 401', async () => {
    const post = (query: string) => request(t.app).post(`${hookUrl('strava')}${query}`).set('Content-Type', 'application/json').send(EVENT);
    expect((await post(`?token=${URL_TOKEN}`)).status).toBe(200);
    const event = eventOf(t.sink.records.at(-1)!);
    expect(event.data.provider).toMatchObject({ name: 'strava', kind: 'activity.update', deliveryId: 'strava:120475:activity:1360128428:update:1516126040', verified: true, authenticates: 'sender' });
    expect(JSON.stringify(event)).not.toContain(URL_TOKEN);
    expect(expectError(await post(''), 'UNAUTHORIZED').details.reason).toBe('signature_missing');
    expect(expectError(await post('?token=b5c0f8a2e9d14c7f8a1b2c3d4e5f6a7c'), 'UNAUTHORIZED').details.reason).toBe('signature_invalid');
  });
});
