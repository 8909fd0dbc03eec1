/**
 * Contract §13.1: "A token header is never one the gateway publishes or answers with": a
 * trigger's `auth.header` naming a header the gateway reads for itself is refused at PUT (400),
 * in any letter case (issue 34 item 8).
 */
import request from 'supertest';
import { ADMIN_TOKEN, testApp } from '../helpers/app';
import { expectError, hookUrl, triggerInput, TRIGGER_TOKEN } from '../helpers/http';

const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };

/** Each as the contract or the issue writes it; each is also tried in lower and upper case. */
const RESERVED = [
  'Idempotency-Key',
  'X-Request-Id',
  'traceparent',
  'tracestate',
  'Content-Type',
  'Host',
  'Content-Length',
  'Transfer-Encoding',
  'Expect',
  'Connection',
  'Keep-Alive',
  'TE',
  'Trailer',
  'Upgrade',
  'X-Forwarded-For',
  'X-Forwarded-Proto',
  'X-Forwarded-Host',
];
const spellings = RESERVED.flatMap((name) => [...new Set([name, name.toLowerCase(), name.toUpperCase()])]);

describe('auth.header naming a header the gateway reads for itself (contract §13.1)', () => {
  const t = testApp();
  let n = 0;

  it.each(spellings)('%s is refused at PUT (400 naming the field), and nothing is stored', async (name) => {
    const path = `reserved-${++n}`;
    const res = await request(t.admin)
      .put(`/admin/triggers/${path}`)
      .set(admin)
      .send(triggerInput({ auth: { token: TRIGGER_TOKEN, header: name } }));
    const error = expectError(res, 'BAD_REQUEST');
    expect(error.details).toEqual([expect.objectContaining({ path: 'auth.header', message: expect.stringContaining(`${name} cannot carry a token`) })]);
    expect(JSON.stringify(res.body)).not.toContain(TRIGGER_TOKEN);
    expect(await t.registry.triggers.get(path)).toBeUndefined();
  });

  it('a header of its own is accepted, and so is Authorization, where the whole value is the token', async () => {
    for (const header of ['X-Hook-Token', 'Authorization']) {
      const path = `allowed-${++n}`;
      const res = await request(t.admin)
        .put(`/admin/triggers/${path}`)
        .set(admin)
        .send(triggerInput({ auth: { token: TRIGGER_TOKEN, header } }));
      expect(res.status).toBe(200);
      const ok = await request(t.app).post(hookUrl(path)).set(header, TRIGGER_TOKEN).send({ a: 1 });
      expect(ok.status).toBe(200);
    }
    // With auth.header Authorization, "Bearer <token>" is not the token: leave auth.header out for that.
    const bearer = await request(t.app).post(hookUrl(`allowed-${n}`)).set('Authorization', `Bearer ${TRIGGER_TOKEN}`).send({ a: 1 });
    expectError(bearer, 'UNAUTHORIZED');
    expect(JSON.stringify(t.sink.events())).not.toContain(TRIGGER_TOKEN);
  });
});
