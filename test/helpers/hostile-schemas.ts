/**
 * The worst cases of issue 34 (contract §13.1): schemas a PUT accepts, and bodies that made
 * checking them stall or kill the process before schemas ran in bounded workers.
 */

/** A body that is a JSON array is published as `input: { body: [...] }` (contract §4). */
export function arrayBody(schema: Record<string, unknown>) {
  return { type: 'object', required: ['body'], properties: { body: schema } };
}

const ORDER_FIELDS = ['id', 'sku', 'name', 'qty', 'price', 'currency', 'customer', 'email', 'createdAt', 'status'];

/** An ordinary orders schema: up to 1,000 items of 10 required, typed fields. */
export const ORDERS = {
  type: 'array',
  maxItems: 1000,
  items: {
    type: 'object',
    required: ORDER_FIELDS,
    properties: Object.fromEntries(ORDER_FIELDS.map((name) => [name, { type: name === 'qty' || name === 'price' ? 'number' : 'string' }])),
  },
};

/** `uniqueItems` on integers: ajv compares them through a map. */
export const UNIQUE_INTEGERS = { type: 'array', items: { type: 'integer' }, uniqueItems: true };

/** `uniqueItems` on anything, as §13.1 allows it: with at most 10,000 items (pairs compared one by one). */
export const UNIQUE_ANYTHING = { type: 'array', uniqueItems: true, maxItems: 10_000 };

/** `count` times `{ type: "string" }` on each item (100 is a 3.5 KB schema). */
export function stringChecks(count: number) {
  return { type: 'array', items: { allOf: Array.from({ length: count }, () => ({ type: 'string' })) } };
}

/**
 * Two ways down at every level, and only the innermost `{}` fails (it lacks `a`): each level
 * tries both ways, so a value nested n deep costs 2^n.
 */
export const EXPONENTIAL = {
  $defs: {
    node: {
      anyOf: [
        { type: 'object', required: ['a'], properties: { a: { $ref: '#/$defs/node' } } },
        { type: 'object', required: ['a'], properties: { a: { $ref: '#/$defs/node' }, b: { type: 'string' } } },
      ],
    },
  },
  $ref: '#/$defs/node',
};

/** 100 `$ref`s to a 100-property definition: 4.7 KB that ajv needed 5.4 s and 119 MB to compile. */
export function refFanOut(n = 100) {
  const properties = Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, { type: 'string' }]));
  return { $defs: { row: { type: 'object', properties } }, allOf: Array.from({ length: n }, () => ({ $ref: '#/$defs/row' })) };
}

/** A JSON array of `count` copies of `item` (as text: building the value first would cost the test more). */
export function jsonArray(item: string, count: number): string {
  return `[${Array(count).fill(item).join(',')}]`;
}

/** `{"a":{"a":…{}…}}`, `depth` levels. */
export function nested(depth: number): string {
  return '{"a":'.repeat(depth) + '{}' + '}'.repeat(depth);
}
