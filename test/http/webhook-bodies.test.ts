import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { testApp } from '../helpers/app';
import { expectError, expectRateLimitHeaders, hookUrl, triggerInput } from '../helpers/http';

/** Every body test gets its own trigger path, so the fingerprint dedupe never joins two tests. */
let counter = 0;
const t = testApp({ MAX_BODY_BYTES: '4096', MAX_FIELDS: '20' });

async function freshTrigger(extra: Parameters<typeof triggerInput>[0] = {}): Promise<string> {
  const path = `body-${++counter}`;
  await t.addTrigger(path, triggerInput(extra));
  return path;
}

function lastEvent(): Record<string, any> {
  const events = t.sink.events();
  expect(events.length).toBeGreaterThan(0);
  return events[events.length - 1];
}

async function postRaw(path: string, contentType: string | undefined, body: string | Buffer) {
  const req = request(t.app).post(hookUrl(path));
  if (contentType !== undefined) req.set('Content-Type', contentType);
  return req.send(body);
}

describe('accepted bodies become `input` (contract §2.4, §4)', () => {
  it('JSON object: the fields by name, default acknowledgement with X-Event-Id', async () => {
    const path = await freshTrigger();
    const res = await postRaw(path, 'application/json', JSON.stringify({ a: 1, nested: { b: [true, null] } }));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: 'Webhook processed', eventId: res.headers['x-event-id'] });
    expect(res.headers['x-event-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(lastEvent().id).toBe(res.headers['x-event-id']);
    expect(lastEvent().data.input).toEqual({ a: 1, nested: { b: [true, null] } });
    expect(lastEvent().data.contentType).toBe('application/json');
  });

  it('application/*+json is JSON', async () => {
    const path = await freshTrigger();
    const res = await postRaw(path, 'application/vnd.github+json; charset=utf-8', '{"action":"opened"}');
    expect(res.status).toBe(200);
    expect(lastEvent().data.input).toEqual({ action: 'opened' });
  });

  it.each([
    ['an array', '[1,2,3]', [1, 2, 3]],
    ['a number', '42', 42],
    ['a string', '"hi"', 'hi'],
    ['null', 'null', null],
    ['a boolean', 'false', false],
  ])('JSON that is %s becomes { body: <it> }', async (_name, text, value) => {
    const path = await freshTrigger();
    const res = await postRaw(path, 'application/json', text);
    expect(res.status).toBe(200);
    expect(lastEvent().data.input).toEqual({ body: value });
    expect(lastEvent().data.common).toEqual({});
  });

  it('text/plain becomes { body: "<text>" }', async () => {
    const path = await freshTrigger();
    const res = await postRaw(path, 'text/plain; charset=utf-8', 'hello, wörld\nline 2');
    expect(res.status).toBe(200);
    expect(lastEvent().data.input).toEqual({ body: 'hello, wörld\nline 2' });
  });

  it('text/plain in latin-1 is decoded by its charset', async () => {
    const path = await freshTrigger();
    const res = await postRaw(path, 'text/plain; charset=iso-8859-1', Buffer.from([0x63, 0x61, 0x66, 0xe9]));
    expect(res.status).toBe(200);
    expect(lastEvent().data.input).toEqual({ body: 'café' });
  });

  it.each([
    ['with no Content-Type', undefined],
    ['with application/json', 'application/json'],
    ['even with a type that is not accepted', 'application/xml'],
  ])('an empty body is {} (%s)', async (_name, contentType) => {
    const path = await freshTrigger();
    const res = await postRaw(path, contentType, '');
    expect(res.status).toBe(200);
    expect(lastEvent().data.input).toEqual({});
    expect(lastEvent().data.common).toEqual({});
  });

  it('urlencoded: fields by name, `x` and `x[]` collected into an array', async () => {
    const path = await freshTrigger();
    const res = await postRaw(path, 'application/x-www-form-urlencoded', 'name=Ann+Lee&tag=a&tag[]=b&tag=c&one[]=only&empty=');
    expect(res.status).toBe(200);
    expect(lastEvent().data.input).toEqual({ name: 'Ann Lee', tag: ['a', 'b', 'c'], one: ['only'], empty: '' });
  });

  it('urlencoded with a lone `payload` field holding JSON (Slack style) is that JSON', async () => {
    const path = await freshTrigger();
    const payload = { type: 'block_actions', event: 'clicked', id: 'A1', data: { v: 1 }, user: { id: 'U1' } };
    const res = await postRaw(path, 'application/x-www-form-urlencoded', `payload=${encodeURIComponent(JSON.stringify(payload))}`);
    expect(res.status).toBe(200);
    expect(lastEvent().data.input).toEqual(payload);
    expect(lastEvent().data.common).toEqual({ event: 'clicked', id: 'A1', data: { v: 1 } });
  });

  it('a `payload` field that is not JSON, or not alone, stays a plain field', async () => {
    const path = await freshTrigger();
    expect((await postRaw(path, 'application/x-www-form-urlencoded', 'payload=hello')).status).toBe(200);
    expect(lastEvent().data.input).toEqual({ payload: 'hello' });
    const json = encodeURIComponent('{"a":1}');
    expect((await postRaw(path, 'application/x-www-form-urlencoded', `payload=${json}&other=1`)).status).toBe(200);
    expect(lastEvent().data.input).toEqual({ payload: '{"a":1}', other: '1' });
  });

  it('publishes the query string, credential-like parameters removed', async () => {
    const path = await freshTrigger();
    const res = await request(t.app).post(`${hookUrl(path)}?source=crm&access_token=leak-me-not&api_key=nope`).send({ a: 1 });
    expect(res.status).toBe(200);
    expect(lastEvent().data.query).toEqual({ source: 'crm' });
    expect(t.sink.records[t.sink.records.length - 1].value).not.toContain('leak-me-not');
  });
});

describe('malformed bodies: 400 with details (contract §2.4)', () => {
  it('malformed JSON', async () => {
    const path = await freshTrigger();
    const res = await postRaw(path, 'application/json', '{"a": 1,');
    const error = expectError(res, 'BAD_REQUEST');
    expect(error.details).toEqual({ reason: 'invalid_json', problem: expect.any(String) });
    expect(t.sink.events().some((e) => e.data.triggerPath === path)).toBe(false);
  });

  it('a lone `payload` form field that starts like JSON but is not', async () => {
    const path = await freshTrigger();
    const res = await postRaw(path, 'application/x-www-form-urlencoded', `payload=${encodeURIComponent('{"a":')}`);
    expect(expectError(res, 'BAD_REQUEST').details).toEqual({ reason: 'invalid_json', problem: expect.any(String) });
  });

  it('bytes that are not valid in the declared charset', async () => {
    const path = await freshTrigger();
    const res = await postRaw(path, 'text/plain; charset=utf-8', Buffer.from([0x68, 0xff, 0xfe, 0x69]));
    expect(expectError(res, 'BAD_REQUEST').details).toEqual({ reason: 'invalid_encoding' });
  });

  it('a multipart body without a boundary', async () => {
    const path = await freshTrigger();
    const res = await postRaw(path, 'multipart/form-data', 'x');
    expect(expectError(res, 'BAD_REQUEST').details).toBeDefined();
  });
});

describe('inputFormat coercion (contract §2.6)', () => {
  const inputFormat = [
    { name: 'count', type: 'number' as const },
    { name: 'flag', type: 'boolean' as const },
    { name: 'meta', type: 'object' as const },
    { name: 'list', type: 'array' as const },
    { name: 'label', type: 'string' as const },
    { name: 'absent', type: 'number' as const },
  ];

  it('coerces form strings to the declared types; a missing declared field is no error', async () => {
    const path = await freshTrigger({ inputFormat });
    const body = new URLSearchParams({ count: '42.5', flag: 'true', meta: '{"a":1}', list: '[1,"x"]', label: '7', other: '9' });
    const res = await postRaw(path, 'application/x-www-form-urlencoded', body.toString());
    expect(res.status).toBe(200);
    expect(lastEvent().data.input).toEqual({ count: 42.5, flag: true, meta: { a: 1 }, list: [1, 'x'], label: '7', other: '9' });
  });

  it('keeps JSON values that already have the declared type', async () => {
    const path = await freshTrigger({ inputFormat });
    const res = await postRaw(path, 'application/json', JSON.stringify({ count: 3, flag: false, meta: {}, list: [], label: 'x' }));
    expect(res.status).toBe(200);
    expect(lastEvent().data.input).toEqual({ count: 3, flag: false, meta: {}, list: [], label: 'x' });
  });

  it('answers 400 naming the field whose value cannot be its type', async () => {
    const path = await freshTrigger({ inputFormat });
    const res = await postRaw(path, 'application/x-www-form-urlencoded', 'count=abc&flag=true');
    const error = expectError(res, 'BAD_REQUEST');
    expect(error.details).toEqual({ reason: 'invalid_field', fields: [{ field: 'count', expected: 'number' }] });
    expect(error.message).toContain('count');
  });

  it('names every bad field at once', async () => {
    const path = await freshTrigger({ inputFormat });
    const res = await postRaw(path, 'application/json', JSON.stringify({ count: 'x', flag: 'maybe', meta: [1], list: '{}' }));
    const error = expectError(res, 'BAD_REQUEST');
    expect(error.details.fields.map((f: { field: string }) => f.field).sort()).toEqual(['count', 'flag', 'list', 'meta']);
  });

  it('a declared object field given malformed JSON text is a 400 for that field', async () => {
    const path = await freshTrigger({ inputFormat });
    const res = await postRaw(path, 'application/x-www-form-urlencoded', `meta=${encodeURIComponent('{"a":')}`);
    expect(expectError(res, 'BAD_REQUEST').details).toEqual({ reason: 'invalid_field', fields: [{ field: 'meta', expected: 'object' }] });
  });
});

describe('415 and 413 (contract §2.4)', () => {
  it.each(['application/xml', 'image/png', 'application/octet-stream', 'text/html', 'application/jsonx'])(
    'answers 415 UNSUPPORTED_MEDIA_TYPE for %s, with rate-limit headers',
    async (type) => {
      const path = await freshTrigger();
      const res = await postRaw(path, type, '<a/>');
      expectError(res, 'UNSUPPORTED_MEDIA_TYPE');
      expectRateLimitHeaders(res);
    },
  );

  it('answers 415 for a non-empty body without Content-Type', async () => {
    const path = await freshTrigger();
    const res = await request(t.app).post(hookUrl(path)).serialize((x: string) => x).send('abc').unset('Content-Type');
    expectError(res, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('answers 415 for an unknown charset', async () => {
    const path = await freshTrigger();
    expectError(await postRaw(path, 'text/plain; charset=klingon', 'x'), 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('answers 413 when Content-Length is over MAX_BODY_BYTES, and publishes nothing', async () => {
    const path = await freshTrigger();
    const res = await postRaw(path, 'application/json', JSON.stringify({ pad: 'x'.repeat(5000) }));
    const error = expectError(res, 'PAYLOAD_TOO_LARGE');
    expect(error.details).toEqual({ reason: 'body_too_large', limit: 4096 });
    expectRateLimitHeaders(res);
    expect(t.sink.events().some((e) => e.data.triggerPath === path)).toBe(false);
  });

  it('accepts a body of exactly MAX_BODY_BYTES', async () => {
    const path = await freshTrigger();
    const body = JSON.stringify({ pad: '' });
    const exact = JSON.stringify({ pad: 'x'.repeat(4096 - body.length) });
    expect(Buffer.byteLength(exact)).toBe(4096);
    expect((await postRaw(path, 'application/json', exact)).status).toBe(200);
  });

  it('answers 413 for too many urlencoded fields (MAX_FIELDS)', async () => {
    const path = await freshTrigger();
    const body = Array.from({ length: 21 }, (_, i) => `f${i}=1`).join('&');
    expect(expectError(await postRaw(path, 'application/x-www-form-urlencoded', body), 'PAYLOAD_TOO_LARGE').details).toEqual({
      reason: 'too_many_fields',
      limit: 'the number of fields',
      max: 20,
    });
  });

  it('answers 413 for a chunked body without Content-Length once it passes the limit, and keeps serving', async () => {
    const path = await freshTrigger();
    const server = t.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          { host: '127.0.0.1', port, method: 'POST', path: hookUrl(path), headers: { 'Content-Type': 'application/json' } },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.write('{"pad":"');
        for (let i = 0; i < 8; i++) req.write('x'.repeat(1024));
        req.end('"}');
      });
      expect(status).toBe(413);
      const after = await request(server).post(hookUrl(path)).send({ ok: true });
      expect(after.status).toBe(200);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('__proto__, constructor and prototype keys change nothing (contract §2.4)', () => {
  afterEach(() => {
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
  });

  function expectClean(input: Record<string, unknown>, raw: string) {
    expect(Object.hasOwn(input, '__proto__')).toBe(false);
    expect(Object.getPrototypeOf(input)).toBe(Object.prototype);
    expect(raw).not.toContain('"__proto__"');
    expect(raw).not.toContain('polluted');
  }

  it('in a JSON body', async () => {
    const path = await freshTrigger();
    const text = '{"a":1,"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},"n":{"__proto__":{"polluted":1}}}';
    const res = await postRaw(path, 'application/json', text);
    expect(res.status).toBe(200);
    const input = lastEvent().data.input;
    expect(input).toEqual({ a: 1, n: {} });
    expectClean(input, t.sink.records[t.sink.records.length - 1].value);
  });

  it('in a JSON body whose keys are written with \\u escapes', async () => {
    const path = await freshTrigger();
    const text = '{"a":1,"\\u005f_proto__":{"polluted":"yes"},"constructor":{"\\u0070rototype":{"polluted":"yes"}}}';
    expect(Object.hasOwn(JSON.parse(text), '__proto__')).toBe(true); // the escape is a real __proto__ key
    const res = await postRaw(path, 'application/json', text);
    expect(res.status).toBe(200);
    const input = lastEvent().data.input;
    expect(input).toEqual({ a: 1 });
    expectClean(input, t.sink.records[t.sink.records.length - 1].value);
  });

  it('in a urlencoded body', async () => {
    const path = await freshTrigger();
    const res = await postRaw(
      path,
      'application/x-www-form-urlencoded',
      '__proto__=x&__proto__[]=y&constructor=z&prototype=w&a=1&__proto__%5Bpolluted%5D=yes',
    );
    expect(res.status).toBe(200);
    const input = lastEvent().data.input;
    expect(Object.hasOwn(input, '__proto__')).toBe(false);
    expect(Object.hasOwn(input, 'constructor')).toBe(false);
    expect(Object.hasOwn(input, 'prototype')).toBe(false);
    expect(input.a).toBe('1');
    expect(Object.getPrototypeOf(input)).toBe(Object.prototype);
  });

  it('in a Slack-style payload field', async () => {
    const path = await freshTrigger();
    const payload = '{"a":1,"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}}}';
    const res = await postRaw(path, 'application/x-www-form-urlencoded', `payload=${encodeURIComponent(payload)}`);
    expect(res.status).toBe(200);
    const input = lastEvent().data.input;
    expect(input).toEqual({ a: 1 });
    expectClean(input, t.sink.records[t.sink.records.length - 1].value);
  });

  it('in a form field declared as object by inputFormat', async () => {
    const path = await freshTrigger({ inputFormat: [{ name: 'meta', type: 'object' }] });
    const meta = '{"ok":1,"__proto__":{"polluted":"yes"}}';
    const res = await postRaw(path, 'application/x-www-form-urlencoded', `meta=${encodeURIComponent(meta)}`);
    expect(res.status).toBe(200);
    const input = lastEvent().data.input;
    expect(input).toEqual({ meta: { ok: 1 } });
    expectClean(input.meta, t.sink.records[t.sink.records.length - 1].value);
  });

  it('in the query string', async () => {
    const path = await freshTrigger();
    const res = await request(t.app).post(`${hookUrl(path)}?__proto__[polluted]=yes&__proto__=x&q=1`).send({});
    expect(res.status).toBe(200);
    const query = lastEvent().data.query;
    expect(Object.hasOwn(query, '__proto__')).toBe(false);
    expect(query.q).toBe('1');
  });
});
