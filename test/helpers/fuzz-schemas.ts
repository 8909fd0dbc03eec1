/**
 * Seeded generators of JSON Schemas and bodies for the schema fuzz test (contract §13.1):
 * random schemas over the draft 2020-12 keywords, hostile ones (the worst cases of issue 34,
 * loops, catastrophic and Perl-only patterns, wrong keyword values, remote refs), and bodies
 * that are sometimes shaped by the schema, sometimes huge, deep or odd. Same seed, same case.
 */
import type { Rng } from './fuzz-bodies';
import { EXPONENTIAL, nested, ORDERS, refFanOut, stringChecks, UNIQUE_ANYTHING, UNIQUE_INTEGERS } from './hostile-schemas';

type Schema = boolean | Record<string, unknown>;

const TYPES = ['string', 'number', 'integer', 'boolean', 'null', 'object', 'array'];
const PATTERNS = ['^[a-z]+$', '^(a+)+$', '(x|x)*y', '^ord_[0-9]+$', '(a)\\1', '^(?=a)a', '[', '.*', '^\\p{L}+$', 'a{2,5}', '(a|aa)*$'];
const NAMES = ['a', 'b', 'id', 'amount', 'items', '__proto__', 'constructor', '', 'x/y', '~0'];
const DECIMALS = [0.01, 0.1, 0.05, 0.001, 1e-7, 2.5, 3, 1e21];

export function randomSchema(rng: Rng): Schema {
  const hostile = [
    () => ORDERS,
    () => UNIQUE_INTEGERS,
    () => UNIQUE_ANYTHING,
    () => stringChecks(1 + rng.int(120)),
    () => EXPONENTIAL,
    () => refFanOut(5 + rng.int(120)),
    () => ({ allOf: [{ $ref: '#' }] }),
    () => ({ $defs: { a: { anyOf: [{ $ref: '#/$defs/b' }] }, b: { not: { $ref: '#/$defs/a' } } }, properties: { x: { $ref: '#/$defs/a' } } }),
    () => ({ type: 'array', uniqueItems: true }),
    () => ({ $ref: 'https://example.com/remote.json' }),
    () => ({ type: 'strnig' }),
    () => ({ properties: Object.fromEntries(Array.from({ length: 120 }, (_, i) => [`f${i}`, { pattern: `^${i}` }])) }),
    () => ({ type: 'object', properties: { children: { type: 'array', items: { $ref: '#' } }, name: { type: 'string' } } }),
    () => nestedApplicators(rng, 1 + rng.int(40), 1),
    () => nestedApplicators(rng, 1 + rng.int(11), 2),
  ];
  if (rng.chance(0.3)) return rng.pick(hostile)();
  if (rng.chance(0.05)) return rng.chance(0.5);
  return node(rng, 0);
}

/** allOf/anyOf/oneOf/not nested `depth` deep, the level below repeated `copies` times in each (2^depth in JSON for 2). */
function nestedApplicators(rng: Rng, depth: number, copies: number): Schema {
  let schema: Schema = { type: rng.pick(TYPES) };
  for (let i = 0; i < depth; i++) {
    const keyword = rng.pick(['allOf', 'anyOf', 'oneOf', 'not']);
    schema = keyword === 'not' ? { not: schema } : { [keyword]: [...Array(copies).fill(schema), { type: rng.pick(TYPES) }] };
  }
  return schema;
}

function node(rng: Rng, depth: number): Schema {
  const schema: Record<string, unknown> = {};
  const count = 1 + rng.int(depth > 3 ? 2 : 5);
  for (let i = 0; i < count; i++) keyword(rng, depth, schema);
  return schema;
}

function keyword(rng: Rng, depth: number, schema: Record<string, unknown>): void {
  const sub = () => (depth > 4 ? { type: rng.pick(TYPES) } : node(rng, depth + 1));
  const subs = () => Array.from({ length: 1 + rng.int(4) }, sub);
  const choices: (() => void)[] = [
    () => (schema.type = rng.chance(0.8) ? rng.pick(TYPES) : [rng.pick(TYPES), rng.pick(TYPES)]),
    () => (schema.properties = Object.fromEntries(Array.from({ length: 1 + rng.int(4) }, () => [rng.pick(NAMES), sub()]))),
    () => (schema.required = [...new Set(Array.from({ length: 1 + rng.int(3) }, () => rng.pick(NAMES)))]),
    () => (schema.items = sub()),
    () => (schema.prefixItems = subs()),
    () => (schema.additionalProperties = rng.chance(0.5) ? rng.chance(0.5) : sub()),
    () => (schema.patternProperties = { [rng.pick(PATTERNS)]: sub() }),
    () => (schema.pattern = rng.pick(PATTERNS)),
    () => (schema.multipleOf = rng.pick(DECIMALS)),
    () => (schema[rng.pick(['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'])] = rng.int(200) - 100),
    () => (schema[rng.pick(['minLength', 'maxLength', 'minItems', 'maxItems', 'minProperties', 'maxProperties'])] = rng.int(50)),
    () => Object.assign(schema, { uniqueItems: true }, rng.chance(0.5) ? { maxItems: rng.pick([10, 10_000, 20_000]) } : {}),
    () => (schema.enum = [1, 'a', null, { a: 1 }, [1, 2]].slice(0, 1 + rng.int(5))),
    () => (schema.const = rng.pick([1, 'a', null, { a: [1] }])),
    () => (schema[rng.pick(['allOf', 'anyOf', 'oneOf'])] = subs()),
    () => (schema.not = sub()),
    () => Object.assign(schema, { if: sub(), then: sub(), else: sub() }),
    () => Object.assign(schema, { contains: sub(), minContains: rng.int(3) }),
    () => (schema.dependentRequired = { [rng.pick(NAMES)]: [rng.pick(NAMES)] }),
    () => (schema.propertyNames = { maxLength: rng.int(10) }),
    () => (schema.unevaluatedProperties = rng.chance(0.5) ? false : sub()),
    () => (schema.format = rng.pick(['email', 'regex', 'date-time', 'bogus'])),
    () => Object.assign(schema, { $defs: { d: sub() } }, rng.chance(0.5) ? { $ref: '#/$defs/d' } : { properties: { r: { $ref: '#' } } }),
    () => (schema[rng.pick(['x-custom', 'minimum', 'items'])] = rng.pick(['oops', -1, [], {}])),
  ];
  rng.pick(choices)();
}

/** A JSON body for the schema: sometimes huge, deep, or full of odd values. */
export function randomBody(rng: Rng): string {
  const kinds = [
    () => JSON.stringify(value(rng, 0)),
    () => `[${Array(1 + rng.int(20_000)).fill(rng.pick(['{}', '0', '"a"', '1.13', '[1,2]', '{"a":{"a":{}}}', 'null'])).join(',')}]`,
    () => nested(rng.int(250)),
    () => JSON.stringify({ body: Array.from({ length: rng.int(5000) }, (_, i) => (rng.chance(0.5) ? i : { k: i })) }),
    () => JSON.stringify({ s: `${'a'.repeat(rng.int(60_000))}!`, [`${'x'.repeat(rng.int(5000))}!`]: 1 }),
    () => JSON.stringify(Array.from({ length: 1 + rng.int(3000) }, (_, i) => Number(((i + 1) / 100).toFixed(2)))),
  ];
  return rng.pick(kinds)();
}

function value(rng: Rng, depth: number): unknown {
  const kinds = [
    () => rng.int(1000) / rng.pick([1, 10, 100, 1000]),
    () => rng.pick(['', 'a', 'ord_12', 'aaaa!', 'ünï', 'x'.repeat(rng.int(300))]),
    () => rng.chance(0.5),
    () => null,
    () => (depth > 5 ? [] : Array.from({ length: rng.int(6) }, () => value(rng, depth + 1))),
    () => (depth > 5 ? {} : Object.fromEntries(Array.from({ length: rng.int(6) }, () => [rng.pick(NAMES), value(rng, depth + 1)]))),
  ];
  return rng.pick(kinds)();
}
