import type { Readable } from 'node:stream';
import request from 'supertest';
import type { FileStore } from '../../src/files/file-store';
import { ADMIN_TOKEN, testApp } from '../helpers/app';
import { expectError, expectRateLimitHeaders, hookUrl, triggerInput } from '../helpers/http';

/** Contract §13: a JSON Schema per trigger, checked after parsing and inputFormat coercion. */
const t = testApp();
const admin = (method: 'put' | 'post' | 'get', url: string) => request(t.admin)[method](url).set('Authorization', `Bearer ${ADMIN_TOKEN}`);

const ORDER_SCHEMA = {
  type: 'object',
  required: ['orderId', 'amount'],
  properties: {
    orderId: { type: 'string', pattern: '^ord_[0-9]+$' },
    amount: { type: 'number', minimum: 0 },
  },
};

async function putTrigger(path: string, extra: Record<string, unknown>) {
  return admin('put', `/admin/triggers/${path}`).send({ workflowId: 'wf-s', workspaceId: 'ws-s', deployed: true, ...extra });
}

describe('trigger schema (contract §13)', () => {
  it('accepts input that satisfies the schema and publishes it', async () => {
    expect((await putTrigger('orders-ok', { schema: ORDER_SCHEMA })).status).toBe(200);
    const res = await request(t.app).post(hookUrl('orders-ok')).send({ orderId: 'ord_1', amount: 5 });
    expect(res.status).toBe(200);
    expect(t.sink.events().some((e) => e.id === res.headers['x-event-id'])).toBe(true);
  });

  it('refuses input that violates it: 400 schema_invalid with the errors, nothing published, the rate limit charged', async () => {
    await putTrigger('orders-bad', { schema: ORDER_SCHEMA, rateLimit: { limit: 10, windowSeconds: 60 } });
    const before = t.sink.events().length;
    const res = await request(t.app).post(hookUrl('orders-bad')).send({ orderId: 'nope', amount: -1, extra: true });
    const error = expectError(res, 'BAD_REQUEST');
    expect(error.details.reason).toBe('schema_invalid');
    expect(error.details.errors).toEqual(
      expect.arrayContaining([
        { instancePath: '/orderId', keyword: 'pattern', message: expect.stringContaining('^ord_[0-9]+$') },
        { instancePath: '/amount', keyword: 'minimum', message: 'must be >= 0' },
      ]),
    );
    expect(t.sink.events()).toHaveLength(before);
    expect(expectRateLimitHeaders(res).remaining).toBe(9);
  });

  it('lists at most 20 errors', async () => {
    const properties = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`f${i}`, { type: 'string' }]));
    await t.addTrigger('many-errors', triggerInput({ schema: { type: 'object', properties } }));
    const body = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`f${i}`, i]));
    const res = await request(t.app).post(hookUrl('many-errors')).send(body);
    expect(expectError(res, 'BAD_REQUEST').details.errors).toHaveLength(20);
  });

  it('checks the input after inputFormat coercion (form strings become numbers first)', async () => {
    await putTrigger('coerced', {
      inputFormat: [{ name: 'amount', type: 'number' }],
      schema: { type: 'object', properties: { amount: { type: 'number', maximum: 100 } }, required: ['amount'] },
    });
    const ok = await request(t.app).post(hookUrl('coerced')).type('form').send('amount=42');
    expect(ok.status).toBe(200);
    const tooMuch = await request(t.app).post(hookUrl('coerced')).type('form').send('amount=420');
    expect(expectError(tooMuch, 'BAD_REQUEST').details.errors).toEqual([
      { instancePath: '/amount', keyword: 'maximum', message: 'must be <= 100' },
    ]);
  });

  it('refuses an invalid schema at PUT, naming the problem', async () => {
    const wrongType = await putTrigger('bad-schema', { schema: { type: 'strnig' } });
    const issues = expectError(wrongType, 'BAD_REQUEST').details;
    expect(issues).toEqual([expect.objectContaining({ path: 'schema', message: expect.stringMatching(/not a usable JSON Schema.*type/) })]);

    const remoteRef = await putTrigger('bad-schema', { schema: { $ref: 'https://example.com/schema.json' } });
    expect(expectError(remoteRef, 'BAD_REQUEST').details[0].message).toMatch(/can't resolve reference/);

    const huge = await putTrigger('bad-schema', { schema: { description: 'x'.repeat(70_000) } });
    expect(expectError(huge, 'BAD_REQUEST').details[0].message).toMatch(/at most 65536/);

    expect((await admin('get', '/admin/triggers/bad-schema')).status).toBe(404);
  });

  it('refuses at PUT a pattern RE2 cannot run (backreference, lookahead)', async () => {
    for (const pattern of ['(a)\\1', '^(?=a)a']) {
      const res = await putTrigger('perl-pattern', { schema: { properties: { s: { type: 'string', pattern } } } });
      expect(expectError(res, 'BAD_REQUEST').details[0].message).toMatch(/not a usable JSON Schema/);
    }
    const props = await putTrigger('perl-pattern', { schema: { patternProperties: { '(?<=x)y': {} } } });
    expect(props.status).toBe(400);
  });

  it('runs a catastrophic pattern in linear time: ^(a+)+$ on a long aaaa…! is simply refused', async () => {
    await putTrigger('redos', { schema: { properties: { s: { type: 'string', pattern: '^(a+)+$' } }, patternProperties: { '^(x+)+$': { type: 'string' } } } });
    const evil = `${'a'.repeat(50_000)}!`;
    const res = await request(t.app).post(hookUrl('redos')).send({ s: evil, [`${'x'.repeat(5_000)}!`]: 1 });
    expect(expectError(res, 'BAD_REQUEST').details.errors).toEqual([
      { instancePath: '/s', keyword: 'pattern', message: 'must match pattern "^(a+)+$"' },
    ]);
    const fine = await request(t.app).post(hookUrl('redos')).send({ s: 'a'.repeat(50_000) });
    expect(fine.status).toBe(200);
  });

  it('keeps format as an annotation: format "regex" never compiles a sender\'s string', async () => {
    await putTrigger('fmt', { schema: { properties: { r: { type: 'string', format: 'regex' } } } });
    const res = await request(t.app).post(hookUrl('fmt')).send({ r: '(' });
    expect(res.status).toBe(200);
  });

  it('checks multipart bodies streamed to a file store too', async () => {
    const local = testApp();
    local.deps.files = fakeFileStore();
    await local.addTrigger('upload', triggerInput({ schema: { type: 'object', required: ['title'] } }));
    const res = await request(local.app).post(hookUrl('upload')).attach('doc', Buffer.from('hello'), 'a.txt');
    expect(expectError(res, 'BAD_REQUEST').details.reason).toBe('schema_invalid');
    expect(local.sink.events()).toHaveLength(0);
    const ok = await request(local.app).post(hookUrl('upload')).field('title', 'hi').attach('doc', Buffer.from('hello'), 'a.txt');
    expect(ok.status).toBe(200);
  });
});

describe('POST /admin/triggers/{path}/validate (contract §13)', () => {
  beforeAll(async () => {
    await putTrigger('check', {
      inputFormat: [{ name: 'amount', type: 'number' }],
      schema: { type: 'object', properties: { amount: { type: 'number', maximum: 100 } }, required: ['amount'] },
      rateLimit: { limit: 1, windowSeconds: 60 },
    });
  });

  it('answers valid and the input as it would be published, for a sample in the sender\'s own content type', async () => {
    const before = t.sink.events().length;
    const res = await admin('post', '/admin/triggers/check/validate').type('form').send('amount=42&note=hi');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { valid: true, errors: [], input: { amount: 42, note: 'hi' } } });
    const json = await admin('post', '/admin/triggers/check/validate').send({ amount: 7 });
    expect(json.body.data).toEqual({ valid: true, errors: [], input: { amount: 7 } });
    expect(t.sink.events()).toHaveLength(before);
  });

  it('answers invalid with the errors, and publishes, charges and claims nothing', async () => {
    const res = await admin('post', '/admin/triggers/check/validate').set('Idempotency-Key', 'k-1').send({ amount: 1000 });
    expect(res.body).toEqual({
      data: { valid: false, errors: [{ instancePath: '/amount', keyword: 'maximum', message: 'must be <= 100' }], input: { amount: 1000 } },
    });
    // The trigger's one request a minute and the key are still unspent.
    const real = await request(t.app).post(hookUrl('check')).set('Idempotency-Key', 'k-1').send({ amount: 1 });
    expect(real.status).toBe(200);
    expect(real.headers['idempotent-replayed']).toBeUndefined();
  });

  it('gives the same 4xx a sender would get for a body the trigger cannot read, and 404 for an unknown trigger', async () => {
    const broken = await admin('post', '/admin/triggers/check/validate').type('json').send('{"amount":');
    expect(expectError(broken, 'BAD_REQUEST').details.reason).toBe('invalid_json');
    const unknown = await admin('post', '/admin/triggers/nope/validate').send({});
    expectError(unknown, 'NOT_FOUND');
    const unauthenticated = await request(t.admin).post('/admin/triggers/check/validate').send({});
    expectError(unauthenticated, 'UNAUTHORIZED');
  });
});

/** A file store that reads each file and keeps nothing: what accept-upload needs of one. */
function fakeFileStore(): FileStore {
  return {
    name: 'fake',
    bufferBytes: 1024,
    async put(key: string, body: Readable) {
      for await (const _chunk of body) void _chunk;
      return { url: `s3://fake/${key}`, key };
    },
    async discard() {},
    async start() {},
    async ping() {},
    async close() {},
  };
}
