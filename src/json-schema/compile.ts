import { createHash } from 'node:crypto';
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import { LRUCache } from 'lru-cache';
import { RE2JS } from 're2js';

/** Contract §13: a trigger's schema is at most 64 KiB of JSON. */
export const MAX_SCHEMA_BYTES = 64 * 1024;
/** Contract §13: `details.errors` lists at most 20 violations. */
export const MAX_SCHEMA_ERRORS = 20;
/** Compiled schemas kept beyond those of the triggers in use (each costs a closure or two). */
const CACHE_ENTRIES = 1000;

export type JsonSchema = boolean | Record<string, unknown>;

export interface SchemaViolation {
  instancePath: string;
  keyword: string;
  message: string;
}

type Check = (input: unknown) => SchemaViolation[];

/**
 * `pattern` and `patternProperties` run on RE2 (re2js, pure JS): matching is linear in the
 * input, so no tenant's pattern can stall the process (`^(a+)+$` on `aaaa…!` answers at once).
 * Perl-only syntax RE2 lacks (lookaround, backreferences) fails to compile, so such a schema is
 * refused when it is stored.
 */
function re2(pattern: string): { test: (s: string) => boolean; toString: () => string } {
  const compiled = RE2JS.compile(pattern);
  // Ajv shares compiled patterns between schemas under their toString(): it must name the pattern.
  return { test: (s) => compiled.test(s), toString: () => `re2:${pattern}` };
}
re2.code = 're2js';

/**
 * `format` is an annotation (the draft 2020-12 default: the format-annotation vocabulary), so
 * `format: "regex"` never compiles a sender's string as a pattern. Unknown keywords are
 * annotations too (strict: false), as the draft allows; the meta-schema still refuses a keyword
 * with a wrong value. Remote `$ref`s are never fetched: a schema naming one is refused.
 */
const ajv = new Ajv2020({
  allErrors: true,
  strict: false,
  validateFormats: false,
  addUsedSchema: false,
  logger: false,
  code: { regExp: re2 },
});

const byObject = new WeakMap<object, Check>();
const byHash = new LRUCache<string, Check>({ max: CACHE_ENTRIES });

/** Why this value cannot be a trigger's schema, or undefined when it can. */
export function schemaProblem(schema: unknown): string | undefined {
  if (typeof schema === 'boolean') return undefined;
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return 'a JSON Schema is an object or a boolean';
  const bytes = Buffer.byteLength(JSON.stringify(schema));
  if (bytes > MAX_SCHEMA_BYTES) return `the schema is ${bytes} bytes; at most ${MAX_SCHEMA_BYTES}`;
  try {
    checkFor(schema as Record<string, unknown>);
    return undefined;
  } catch (error) {
    return `not a usable JSON Schema (draft 2020-12): ${String((error as Error).message).slice(0, 300)}`;
  }
}

/** The violations of `input` against `schema` (at most 20), empty when it satisfies it. */
export function schemaViolations(schema: JsonSchema, input: unknown): SchemaViolation[] {
  if (schema === true) return [];
  if (schema === false) return [{ instancePath: '', keyword: 'false', message: 'the schema allows no value' }];
  return checkFor(schema)(input);
}

/**
 * One compiled check per schema: the stored trigger's object is reused from the registry's
 * cache, so a WeakMap finds it without hashing; another copy of the same schema (another pod's
 * read, a re-PUT) is found by its hash. Throws when the schema does not compile.
 */
function checkFor(schema: Record<string, unknown>): Check {
  const known = byObject.get(schema);
  if (known) return known;
  const hash = createHash('sha256').update(JSON.stringify(schema)).digest('base64url');
  let check = byHash.get(hash);
  if (!check) {
    check = toCheck(compile(schema));
    byHash.set(hash, check);
  }
  byObject.set(schema, check);
  return check;
}

function compile(schema: Record<string, unknown>): ValidateFunction {
  try {
    return ajv.compile(schema);
  } finally {
    // Ajv keeps every schema it compiled; the LRU above is the only cache that should hold them.
    ajv.removeSchema(schema);
  }
}

function toCheck(validate: ValidateFunction): Check {
  return (input) => {
    if (validate(input)) return [];
    return (validate.errors ?? []).slice(0, MAX_SCHEMA_ERRORS).map(violation);
  };
}

function violation(error: ErrorObject): SchemaViolation {
  return { instancePath: error.instancePath, keyword: error.keyword, message: error.message ?? error.keyword };
}
