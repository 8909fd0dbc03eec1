import request from 'supertest';
import { ADMIN_TOKEN, testApp } from '../../helpers/app';
import { expectError, hookUrl, triggerInput } from '../../helpers/http';

/**
 * monday.com (contract §10.1 D): the webhook URL challenge POST {"challenge"} is echoed; events
 * are unsigned, so the registered URL carries the trigger's token (?token=<secret>). Requests as
 * monday.com's webhook reference shows them (it ships no verifier).
 */

const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
const URL_TOKEN = 'c6a1e0f3b2d94e8a9f0b1c2d3e4f5a6b';
const eventOf = (record: { value: string }) => JSON.parse(record.value);
// monday.com's documented create_pulse (create_item) webhook payload.
const EVENT = JSON.stringify({
  event: {
    userId: 9603417, originalTriggerUuid: null, boardId: 1771812698, pulseId: 1772099344, pulseName: 'Create_item webhook',
    groupId: 'topics', groupName: 'Group Title', groupColor: '#579bfc', isTopGroup: true, columnValues: {}, app: 'monday',
    type: 'create_pulse', triggerTime: '2021-10-11T09:07:28.210Z', subscriptionId: 73759690, triggerUuid: 'b5ed2e17c530f43668de130142445cba',
  },
});

describe('monday', () => {
  const t = testApp();
  beforeAll(async () => {
    const put = (path: string, name: string) => request(t.admin).put(`/admin/triggers/${path}`).set(admin).send(triggerInput({ provider: { name, secrets: [URL_TOKEN] } as never }));
    expect((await put('monday', 'monday')).status).toBe(200);
    expect((await put('monday-on-okta', 'okta')).status).toBe(200);
  });
  const post = (path: string, body: unknown, token: string | null = URL_TOKEN) =>
    request(t.app).post(`${hookUrl(path)}${token === null ? '' : `?token=${token}`}`).set('Content-Type', 'application/json').send(typeof body === 'string' ? body : JSON.stringify(body));

  it('echoes the URL challenge as JSON, publishing nothing', async () => {
    const before = t.sink.records.length;
    const res = await post('monday', { challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' });
    expect(t.sink.records).toHaveLength(before);
  });

  it('refuses a challenge of another shape (400), one without the URL token (401), and answers none on another preset', async () => {
    expect(expectError(await post('monday', { challenge: '<img src=x>' }), 'BAD_REQUEST').details.reason).toBe('invalid_handshake');
    expect(expectError(await post('monday', { challenge: 'abc' }, null), 'UNAUTHORIZED').details.reason).toBe('signature_missing');
    expect(expectError(await post('monday', { challenge: 'abc' }, 'wrong'), 'UNAUTHORIZED').details.reason).toBe('signature_invalid');
    // The same request to an Okta trigger is no handshake: refused by Okta's own check.
    expect(expectError(await post('monday-on-okta', { challenge: 'abc' }), 'UNAUTHORIZED').details.reason).toBe('signature_missing');
  });

  it('publishes an event posted with the URL token by event.type under event.triggerUuid, never the token; another token 401', async () => {
    expect((await post('monday', EVENT)).status).toBe(200);
    const event = eventOf(t.sink.records.at(-1)!);
    expect(event.data.provider).toMatchObject({ name: 'monday', kind: 'create_pulse', deliveryId: 'b5ed2e17c530f43668de130142445cba', verified: true, authenticates: 'sender' });
    expect(JSON.stringify(event)).not.toContain(URL_TOKEN);
    expect(expectError(await post('monday', EVENT, 'c6a1e0f3b2d94e8a9f0b1c2d3e4f5a6c'), 'UNAUTHORIZED').details.reason).toBe('signature_invalid');
  });
});
