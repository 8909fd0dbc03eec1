/**
 * helmet's headers are computed once at start-up (src/http/security-headers.ts): every answer
 * of both listeners still carries exactly what helmet itself sets on a response.
 */
import express from 'express';
import request from 'supertest';
import { helmetMiddleware } from '../../src/http/security-headers';
import { ADMIN_TOKEN, testApp } from '../helpers/app';
import { hookUrl, triggerInput, TRIGGER_TOKEN } from '../helpers/http';

/** The headers helmet adds to a plain express answer, and their values. */
async function helmetHeaders(): Promise<Record<string, string>> {
  const plain = express().get('/', (_req, res) => void res.json({}));
  const helmeted = express().use(helmetMiddleware()).get('/', (_req, res) => void res.json({}));
  const without = (await request(plain).get('/')).headers;
  const withHelmet = (await request(helmeted).get('/')).headers;
  return Object.fromEntries(Object.entries(withHelmet).filter(([name]) => !(name in without) && name !== 'date'));
}

describe("helmet's headers on every answer", () => {
  it('a 200, a 401, a 404 and an admin answer carry each of helmet headers with its value', async () => {
    const expected = await helmetHeaders();
    expect(Object.keys(expected)).toEqual(expect.arrayContaining(['x-content-type-options', 'strict-transport-security', 'x-frame-options']));
    const t = testApp();
    await t.addTrigger('hdr', triggerInput({ auth: { token: TRIGGER_TOKEN } }));
    const answers = [
      await request(t.app).post(hookUrl('hdr')).set('Authorization', `Bearer ${TRIGGER_TOKEN}`).send({ a: 1 }),
      await request(t.app).post(hookUrl('hdr')).set('Authorization', 'Bearer wrong').send({ a: 1 }),
      await request(t.app).post(hookUrl('missing')).send({ a: 1 }),
      await request(t.admin).get('/admin/triggers/hdr').set('Authorization', `Bearer ${ADMIN_TOKEN}`),
    ];
    expect(answers.map((res) => res.status)).toEqual([200, 401, 404, 200]);
    for (const res of answers) {
      for (const [name, value] of Object.entries(expected)) expect({ name, value: res.headers[name] }).toEqual({ name, value });
    }
  });
});
