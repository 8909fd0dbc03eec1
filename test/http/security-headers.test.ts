/**
 * The admin listener answers with helmet's headers, computed once at start-up
 * (src/http/security-headers.ts); the public listener answers machines (webhook senders, chat
 * platforms) with the headers they use, without helmet's browser headers.
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

describe('security headers', () => {
  it("an admin answer carries each of helmet's headers with its value", async () => {
    const expected = await helmetHeaders();
    expect(Object.keys(expected)).toEqual(expect.arrayContaining(['x-content-type-options', 'strict-transport-security', 'x-frame-options']));
    const t = testApp();
    await t.addTrigger('hdr', triggerInput({ auth: { token: TRIGGER_TOKEN } }));
    const answers = [
      await request(t.admin).get('/admin/triggers/hdr').set('Authorization', `Bearer ${ADMIN_TOKEN}`),
      await request(t.admin).get('/admin/triggers/missing').set('Authorization', `Bearer ${ADMIN_TOKEN}`),
    ];
    expect(answers.map((res) => res.status)).toEqual([200, 404]);
    for (const res of answers) {
      for (const [name, value] of Object.entries(expected)) expect({ name, value: res.headers[name] }).toEqual({ name, value });
    }
  });

  it("a public 202, 401 and 404 carry nosniff, no-store and the request id, and none of helmet's browser headers", async () => {
    const browserOnly = Object.keys(await helmetHeaders()).filter((name) => name !== 'x-content-type-options');
    expect(browserOnly).toEqual(expect.arrayContaining(['strict-transport-security', 'x-frame-options', 'referrer-policy']));
    const t = testApp();
    await t.addTrigger('hdr', triggerInput({ auth: { token: TRIGGER_TOKEN } }));
    const answers = [
      await request(t.app).post(hookUrl('hdr')).set('Authorization', `Bearer ${TRIGGER_TOKEN}`).send({ a: 1 }),
      await request(t.app).post(hookUrl('hdr')).set('Authorization', 'Bearer wrong').send({ a: 1 }),
      await request(t.app).post(hookUrl('missing')).send({ a: 1 }),
    ];
    expect(answers.map((res) => res.status)).toEqual([200, 401, 404]);
    for (const res of answers) {
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['x-request-id']).toEqual(expect.any(String));
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      for (const name of browserOnly) expect({ name, value: res.headers[name] }).toEqual({ name, value: undefined });
    }
  });
});
