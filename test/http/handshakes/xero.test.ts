import { createHmac } from 'node:crypto';
import request from 'supertest';
import { ADMIN_TOKEN, testApp } from '../../helpers/app';
import { expectError, hookUrl, triggerInput } from '../../helpers/http';

/**
 * Xero (contract §10.1 D): the "intent to receive" is a batch of signed POSTs with `events: []`,
 * some signed with another key on purpose: 200 for the valid ones, 401 for the others, nothing
 * published. xero-node ships no webhook helper, so requests are signed as Xero's webhook guide
 * says: x-xero-signature = base64 HMAC-SHA256 of the raw body, key = the webhook key.
 */

const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
const KEY = 'OSd0eLlVIY9ZhViEqlDUh4+6n6M+Lo+eDaEJheJ6OCCgWwIz2D3JIAU6jPMipHRbgKTLz2uJ+xiACXGDBLrgdA==';
const sign = (body: string, key = KEY) => createHmac('sha256', key).update(body).digest('base64');
const eventOf = (record: { value: string }) => JSON.parse(record.value);
// Xero's documented intent-to-receive payload and event payload (webhooks overview).
const ITR = JSON.stringify({ events: [], firstEventSequence: 0, lastEventSequence: 0, entropy: 'YSXCMKAQBJOEMGUZEPFZ' });
const EVENT = JSON.stringify({
  events: [
    {
      resourceUrl: 'https://api.xero.com/api.xro/2.0/Contacts/717f2bfc-c6d4-41fd-b238-3f2f0c0cf777',
      resourceId: '717f2bfc-c6d4-41fd-b238-3f2f0c0cf777',
      eventDateUtc: '2017-06-21T01:15:39.902',
      eventType: 'UPDATE',
      eventCategory: 'CONTACT',
      tenantId: 'c2cc9b6e-9458-4c7d-93cc-f02b81b0594f',
      tenantType: 'ORGANISATION',
    },
  ],
  lastEventSequence: 1,
  firstEventSequence: 1,
  entropy: 'S0m3r4Nd0mt3xt',
});

describe('xero', () => {
  const t = testApp();
  beforeAll(async () => {
    const put = await request(t.admin).put('/admin/triggers/xero').set(admin).send(triggerInput({ provider: { name: 'xero', secrets: [KEY] } as never }));
    expect(put.status).toBe(200);
  });
  const post = (body: string, signature: string | undefined) => {
    const req = request(t.app).post(hookUrl('xero')).set('Content-Type', 'application/json');
    return (signature === undefined ? req : req.set('x-xero-signature', signature)).send(body);
  };

  it('answers a validly signed intent to receive 200 with an empty body, and one signed with another key 401; publishes nothing', async () => {
    const before = t.sink.records.length;
    const ok = await post(ITR, sign(ITR));
    expect(ok.status).toBe(200);
    expect(ok.text).toBe('');
    expect(expectError(await post(ITR, sign(ITR, 'another webhook key')), 'UNAUTHORIZED').details.reason).toBe('signature_invalid');
    expect(expectError(await post(ITR, undefined), 'UNAUTHORIZED').details.reason).toBe('signature_missing');
    expect(t.sink.records).toHaveLength(before);
  });

  it('publishes a genuine delivery as <eventCategory>.<eventType>, without the signature; one changed byte is 401', async () => {
    const res = await post(EVENT, sign(EVENT));
    expect(res.status).toBe(200);
    const event = eventOf(t.sink.records.at(-1)!);
    expect(event.data.provider).toMatchObject({ name: 'xero', kind: 'CONTACT.UPDATE', verified: true, authenticates: 'body' });
    expect(event.data.headers['x-xero-signature']).toBeUndefined();
    const changed = EVENT.replace('UPDATE', 'CREATE');
    expect(expectError(await post(changed, sign(EVENT)), 'UNAUTHORIZED').details.reason).toBe('signature_invalid');
  });

  it('answers no GET (Xero has none): 405', async () => {
    expect((await request(t.app).get(hookUrl('xero'))).status).toBe(405);
  });
});
