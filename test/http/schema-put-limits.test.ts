import request from 'supertest';
import { MAX_REGEX_CHARS, MAX_REGEXES, MAX_UNIQUE_ITEMS } from '../../src/json-schema/limits';
import { ADMIN_TOKEN, testApp } from '../helpers/app';
import { expectError, hookUrl } from '../helpers/http';
import { arrayBody, refFanOut } from '../helpers/hostile-schemas';

/** Contract §13.1: what a schema may cost is settled at PUT, and `multipleOf` is exact (issue 34 items 2, 4, 7). */
const t = testApp();

function putSchema(path: string, schema: unknown) {
  return request(t.admin)
    .put(`/admin/triggers/${path}`)
    .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
    .send({ workflowId: 'wf-s', workspaceId: 'ws-s', deployed: true, schema });
}

/** The one issue of a 400 invalid_schema, at path `schema`. */
async function refusedSchema(path: string, schema: unknown): Promise<string> {
  const details = expectError(await putSchema(path, schema), 'BAD_REQUEST').details;
  expect(details).toEqual([expect.objectContaining({ path: 'schema' })]);
  expect((await request(t.admin).get(`/admin/triggers/${path}`).set('Authorization', `Bearer ${ADMIN_TOKEN}`)).status).toBe(404);
  return details[0].message;
}

describe('a schema that cannot compile within its budget is refused at PUT (400 schema_too_complex)', () => {
  it('refuses 100 $refs to a 100-property definition (4.7 KB), naming the bound', async () => {
    const res = await putSchema('fan-out', refFanOut(100));
    const error = expectError(res, 'BAD_REQUEST');
    expect(error.details).toEqual({ reason: 'schema_too_complex', path: 'schema' });
    expect(error.message).toMatch(/more than 10000 keywords once each \$ref is counted/);
  });

  it('accepts definitions that refer to each other (ajv compiles a definition with references once and calls it)', async () => {
    // 60 object definitions, each referring to the next three: about 20 KB, compiled in about 0.2 s.
    // Counted as if every reference were inlined it would amount to ~10^12 keywords.
    const $defs: Record<string, unknown> = {};
    for (let i = 0; i < 60; i++) {
      const properties: Record<string, unknown> = {};
      for (let k = 0; k < 5; k++) properties[`f${k}`] = { type: 'string', maxLength: 100 };
      for (let k = 1; k <= 3 && i + k < 60; k++) properties[`r${k}`] = { $ref: `#/$defs/d${i + k}` };
      $defs[`d${i}`] = { type: 'object', properties, required: ['f0'] };
    }
    expect((await putSchema('graph', { $defs, $ref: '#/$defs/d0' })).status).toBe(200);
    expect((await request(t.app).post(hookUrl('graph')).send({ f0: 'a', r1: { f0: 'b', r3: { f0: 'c' } } })).status).toBe(200);
    const res = await request(t.app).post(hookUrl('graph')).send({ f0: 'a', r2: { f0: 'b', r1: { f1: 'c' } } });
    expect(expectError(res, 'BAD_REQUEST').details.errors).toEqual([
      { instancePath: '/r2/r1', keyword: 'required', message: "must have required property 'f0'" },
    ]);
  });

  it('accepts the same definition used a few times, and a recursive tree schema (recursion that descends into the value)', async () => {
    expect((await putSchema('fan-out-small', refFanOut(10))).status).toBe(200);
    const tree = { type: 'object', properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#' } } } };
    expect((await putSchema('tree', tree)).status).toBe(200);
    const res = await request(t.app).post(hookUrl('tree')).send({ name: 'a', children: [{ name: 'b', children: [{ name: 7 }] }] });
    expect(expectError(res, 'BAD_REQUEST').details.errors).toEqual([
      { instancePath: '/children/0/children/0/name', keyword: 'type', message: 'must be string' },
    ]);
  });
});

describe('a $ref loop is refused at PUT, never a 500 on a delivery', () => {
  it.each([
    ['allOf back to the root', { allOf: [{ $ref: '#' }] }],
    ['anyOf and not through two definitions', { $defs: { a: { anyOf: [{ $ref: '#/$defs/b' }] }, b: { not: { $ref: '#/$defs/a' } } }, $ref: '#/$defs/a' }],
    ['oneOf through an anchor', { $defs: { a: { $anchor: 'here', oneOf: [{ $ref: '#here' }, { type: 'string' }] } }, properties: { x: { $ref: '#/$defs/a' } } }],
    ['a $ref to itself', { $defs: { a: { $ref: '#/$defs/a' } }, properties: { x: { $ref: '#/$defs/a' } } }],
    // Inside a nested `$id` a reference resolves against that resource, as ajv resolves it.
    ['anyOf back to a nested resource through "#"', { $defs: { a: { $id: 'https://e.example/a', anyOf: [{ $ref: '#' }] } }, properties: { x: { $ref: 'https://e.example/a' } } }],
    ['not through a relative $id', { $id: 'https://e.example/root', $defs: { a: { $id: 'a', not: { $ref: 'a' } } }, properties: { x: { $ref: 'a' } } }],
    [
      'oneOf through the anchor of a nested resource',
      { $defs: { a: { $id: 'https://e.example/a', $anchor: 'z', oneOf: [{ $ref: 'https://e.example/a#z' }, { type: 'string' }] } }, properties: { x: { $ref: 'https://e.example/a' } } },
    ],
    [
      'allOf through an absolute URI and a pointer',
      { $defs: { a: { $id: 'https://e.example/a', $defs: { b: { allOf: [{ $ref: 'https://e.example/a#/$defs/b' }] } } } }, properties: { x: { $ref: 'https://e.example/a#/$defs/b' } } },
    ],
  ])('%s', async (_name, schema) => {
    expect(await refusedSchema('loop', schema)).toMatch(/leads back to itself without descending into the value/);
  });

  it('accepts a nested resource whose "#" descends into the value, and delivers against it', async () => {
    const schema = { allOf: [{ $ref: '#/$defs/a' }], $defs: { a: { $id: 'https://e.example/a', type: 'object', properties: { c: { $ref: '#' } } } } };
    expect((await putSchema('nested-resource', schema)).status).toBe(200);
    expect((await request(t.app).post(hookUrl('nested-resource')).send({ c: { c: {} } })).status).toBe(200);
    const res = await request(t.app).post(hookUrl('nested-resource')).send({ c: { c: 1 } });
    expect(expectError(res, 'BAD_REQUEST').details.errors).toEqual([{ instancePath: '/c/c', keyword: 'type', message: 'must be object' }]);
  });
});

describe('uniqueItems on items that are not all scalars needs maxItems <= 10,000', () => {
  it('refuses it without maxItems, or with a larger one, naming the bound', async () => {
    expect(await refusedSchema('unique', { type: 'array', uniqueItems: true })).toMatch(`needs maxItems of at most ${MAX_UNIQUE_ITEMS}`);
    expect(await refusedSchema('unique', { type: 'array', uniqueItems: true, items: { type: 'object' }, maxItems: MAX_UNIQUE_ITEMS + 1 })).toMatch(
      `needs maxItems of at most ${MAX_UNIQUE_ITEMS}`,
    );
    expect(await refusedSchema('unique', { properties: { tags: { uniqueItems: true, items: { type: ['string', 'array'] } } } })).toMatch(/^\/properties\/tags: uniqueItems/);
  });

  it('accepts it on scalar items (compared through a map), or with maxItems <= 10,000', async () => {
    expect((await putSchema('unique-ok', { type: 'array', uniqueItems: true, items: { type: ['string', 'integer'] } })).status).toBe(200);
    expect((await putSchema('unique-ok', { type: 'array', uniqueItems: true, maxItems: MAX_UNIQUE_ITEMS })).status).toBe(200);
  });
});

describe('the number and total size of regular expressions are bounded', () => {
  const patterns = (count: number, length: number) =>
    Object.fromEntries(Array.from({ length: count }, (_, i) => [`f${i}`, { type: 'string', pattern: `^${String(i).padEnd(length - 1, 'a')}` }]));

  it(`refuses more than ${MAX_REGEXES}, naming the limit (patternProperties keys count too)`, async () => {
    expect((await putSchema('regexes', { properties: patterns(MAX_REGEXES, 8) })).status).toBe(200);
    expect(await refusedSchema('regexes-over', { properties: patterns(MAX_REGEXES, 8), patternProperties: { '^x': {} } })).toBe(
      `the schema has ${MAX_REGEXES + 1} regular expressions (pattern, patternProperties); at most ${MAX_REGEXES}`,
    );
  });

  it(`refuses more than ${MAX_REGEX_CHARS} characters of them in all, naming the limit`, async () => {
    expect(await refusedSchema('regex-chars', { properties: patterns(10, 820) })).toBe(
      `the schema's regular expressions have 8200 characters in all; at most ${MAX_REGEX_CHARS}`,
    );
  });
});

describe('multipleOf is exact for decimal amounts (issue 34 item 4)', () => {
  it('accepts every two-decimal amount from 0.01 to 100.00 against multipleOf 0.01, and still refuses 0.001', async () => {
    expect((await putSchema('cents', arrayBody({ type: 'array', items: { type: 'number', multipleOf: 0.01 } }))).status).toBe(200);
    const amounts = Array.from({ length: 10_000 }, (_, i) => Number(((i + 1) / 100).toFixed(2)));
    expect(amounts).toContain(1.13);
    expect(amounts).toContain(0.29);
    expect((await request(t.app).post(hookUrl('cents')).send(amounts)).status).toBe(200);
    for (const wrong of [0.001, 1.131, 100.005]) {
      const res = await request(t.app).post(hookUrl('cents')).send([1.13, wrong]);
      expect(expectError(res, 'BAD_REQUEST').details.errors).toEqual([{ instancePath: '/body/1', keyword: 'multipleOf', message: 'must be multiple of 0.01' }]);
    }
  });
});
