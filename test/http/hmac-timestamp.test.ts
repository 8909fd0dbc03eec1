/**
 * Contract §10, "timestamps come from signed material only": the generic hmac preset takes a
 * timestampHeader only when signedContent puts {timestamp} under the MAC. Otherwise the header
 * is checked against the tolerance while a replayer may set it to anything.
 */
import request from 'supertest';
import { ADMIN_TOKEN, testApp } from '../helpers/app';
import { expectError, hookUrl, triggerInput } from '../helpers/http';
import { nowSeconds, opensslHmac } from '../fixtures/providers/openssl';

const SECRET = 'hmac-timestamp-secret';
const auth = { Authorization: `Bearer ${ADMIN_TOKEN}` };
const base = { header: 'x-sig', algorithm: 'sha256', encoding: 'hex', timestampHeader: 'x-ts' };

describe('hmac preset: a timestamp header must be signed', () => {
  const t = testApp();

  it.each([
    ['the default signedContent ({body})', base],
    ['a signedContent without {timestamp}', { ...base, signedContent: 'v1:{body}' }],
  ])('PUT with timestampHeader and %s → 400 naming options.signedContent', async (_, options) => {
    const res = await request(t.admin).put('/admin/triggers/unsigned-ts').set(auth).send(triggerInput({ provider: { name: 'hmac', secrets: [SECRET], options } }));
    const error = expectError(res, 'BAD_REQUEST');
    expect(JSON.stringify(error)).toMatch(/options\W+signedContent/);
    expect(JSON.stringify(error)).toContain('{timestamp}');
  });

  it('with {timestamp} signed, a captured delivery sent again with a fresh timestamp header is refused', async () => {
    const options = { ...base, signedContent: '{timestamp}.{body}' };
    const put = await request(t.admin).put('/admin/triggers/signed-ts').set(auth).send(triggerInput({ provider: { name: 'hmac', secrets: [SECRET], options } }));
    expect(put.status).toBeLessThan(300);
    const body = JSON.stringify({ type: 'order.paid', id: 'o-1' });
    const signedAt = nowSeconds() - 10;
    const signature = opensslHmac('sha256', SECRET, `${signedAt}.${body}`).toString('hex');
    const send = (timestamp: number) =>
      request(t.app).post(hookUrl('signed-ts')).set('Content-Type', 'application/json').set('x-sig', signature).set('x-ts', String(timestamp)).send(body);
    expect((await send(signedAt)).status).toBe(200);
    expect(expectError(await send(signedAt + 5), 'UNAUTHORIZED').details).toMatchObject({ reason: 'signature_invalid' });
  });
});
