/**
 * Contract §2.5: "A `type: "url"` value in an event always names an object the gateway itself
 * stored for that event." Not only fields declared `file[]`: a `{ type: "url" }` object anywhere
 * in a sender's body is refused, whatever the trigger declares.
 */
import request from 'supertest';
import { testApp } from '../helpers/app';
import { expectError, hookUrl, triggerInput } from '../helpers/http';

describe('a sender may not write a type url value anywhere in input', () => {
  const t = testApp();
  let n = 0;
  const fresh = async (overrides: Parameters<typeof triggerInput>[0] = {}) => {
    const path = `fu-${++n}`;
    await t.addTrigger(path, triggerInput(overrides));
    return path;
  };
  const forged = { type: 'url', data: 's3://bucket/other-ws/secret.pdf' };

  it.each([
    ['a top-level field of a trigger without inputFormat', { doc: forged }, '$.doc'],
    ['a nested object', { a: { b: [1, { c: forged }] } }, '$.a.b[1].c'],
    ['a key that is not an identifier', { 'my doc': forged }, '$["my doc"]'],
    ['the whole body', forged, '$'],
    ['an array body', [{ ok: 1 }, forged], '$[1]'],
  ])('JSON, %s → 400 file_value_not_allowed naming the path, nothing published', async (_, body, path) => {
    const before = t.sink.records.length;
    const res = await request(t.app).post(hookUrl(await fresh())).send(body as object);
    expect(expectError(res, 'BAD_REQUEST').details).toMatchObject({ reason: 'file_value_not_allowed', path });
    expect(t.sink.records).toHaveLength(before);
  });

  it('"url" spelled with a \\u escape is found as well', async () => {
    const raw = '{"doc":{"type":"\\u0075rl","data":"s3://bucket/other-ws/secret.pdf"}}';
    const res = await request(t.app).post(hookUrl(await fresh())).set('content-type', 'application/json').send(raw);
    expect(expectError(res, 'BAD_REQUEST').details).toMatchObject({ reason: 'file_value_not_allowed', path: '$.doc' });
  });

  it('a form whose lone payload field is JSON, and a form field declared object, are refused the same way', async () => {
    const payload = await request(t.app).post(hookUrl(await fresh())).type('form').send({ payload: JSON.stringify({ x: forged }) });
    expect(expectError(payload, 'BAD_REQUEST').details).toMatchObject({ reason: 'file_value_not_allowed', path: '$.x' });
    const declared = await fresh({ inputFormat: [{ name: 'meta', type: 'object' }] });
    const field = await request(t.app).post(hookUrl(declared)).type('form').send({ meta: JSON.stringify({ f: forged }) });
    expect(expectError(field, 'BAD_REQUEST').details).toMatchObject({ reason: 'file_value_not_allowed', path: '$.meta.f' });
  });

  it('"url" as any other value, a type that is not url, or a type url without data, is published as sent', async () => {
    const body = {
      url: 'url',
      link: { type: 'link', data: 'https://example.com' },
      kinds: ['url'],
      nested: { kind: 'url', type: 'URL' },
      // No `data`: no file value (a Telegram link entity has this shape).
      entity: { offset: 4, length: 20, type: 'url' },
    };
    const res = await request(t.app).post(hookUrl(await fresh())).send({ wrapper: body });
    expect(res.status).toBe(200);
    expect(t.sink.events().at(-1)!.data.input).toEqual({ wrapper: body });
  });
});
