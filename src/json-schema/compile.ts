import { createHash } from 'node:crypto';
import { metaChecker } from './ajv';
import { CheckPool, type CheckOutcome } from './check-pool';
import { expandedKeywords, MAX_EXPANDED_KEYWORDS, staticProblem } from './limits';
import type { SchemaViolation } from './messages';

export type { SchemaViolation } from './messages';

/** Contract §13: a trigger's schema is at most 64 KiB of JSON. */
export const MAX_SCHEMA_BYTES = 64 * 1024;
export { MAX_SCHEMA_ERRORS } from './messages';

/** Contract §13.1's budgets (docs/trigger-schema.md gives the measurements behind them). */
export const SCHEMA_BUDGETS = {
  /** Two workers: one hostile body holds one of them for at most checkMs; 2 cores is the usual pod. */
  workers: 2,
  /** A 64 KiB schema of 1,200 plain properties compiles in about 0.9 s on a shared core. */
  compileMs: 2000,
  /** The worker parses the input's JSON within it too: 0.2-0.5 s for 330,000 `{}` on a loaded core. */
  checkMs: 2000,
  queueMs: 5000,
  heapMb: 256,
};

export type JsonSchema = boolean | Record<string, unknown>;

const pool = new CheckPool(SCHEMA_BUDGETS);
const hashes = new WeakMap<object, string>();

/**
 * Why this value cannot be a trigger's schema, or undefined when it may be: its shape, its
 * size, the meta-schema and the static rules of §13.1 (limits.ts). Cheap and synchronous (the
 * admin body's zod check runs it); whether the schema compiles, and within its budget, is
 * `schemaCompileProblem`'s answer.
 */
export function schemaProblem(schema: unknown): string | undefined {
  if (typeof schema === 'boolean') return undefined;
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return 'a JSON Schema is an object or a boolean';
  const bytes = Buffer.byteLength(JSON.stringify(schema));
  if (bytes > MAX_SCHEMA_BYTES) return `the schema is ${bytes} bytes; at most ${MAX_SCHEMA_BYTES}`;
  try {
    if (!metaChecker.validateSchema(schema)) {
      return `not a usable JSON Schema (draft 2020-12): schema is invalid: ${metaChecker.errorsText(metaChecker.errors).slice(0, 300)}`;
    }
  } catch (error) {
    return `not a usable JSON Schema (draft 2020-12): ${String((error as Error).message).slice(0, 300)}`;
  }
  try {
    return staticProblem(schema as Record<string, unknown>);
  } catch {
    return 'not a usable JSON Schema (draft 2020-12): it nests too deeply'; // a stack overflow
  }
}

export type CompileProblem =
  | { tooComplex: false; problem: string }
  | { tooComplex: true; problem: string }
  /** No worker could compile it (all stayed busy, or one did not start): the gateway's failure, 503. */
  | { busy: true; problem: string };

/**
 * Compiles the schema in a check worker within SCHEMA_BUDGETS.compileMs (the PUT's last step,
 * after `schemaProblem`). The worker keeps it compiled for the deliveries that follow.
 */
export async function schemaCompileProblem(schema: JsonSchema): Promise<CompileProblem | undefined> {
  if (typeof schema === 'boolean') return undefined;
  let expanded: number;
  try {
    expanded = expandedKeywords(schema);
  } catch {
    return { tooComplex: true, problem: 'the schema nests too deeply to be measured' }; // a stack overflow
  }
  if (expanded > MAX_EXPANDED_KEYWORDS) {
    return { tooComplex: true, problem: `the schema amounts to more than ${MAX_EXPANDED_KEYWORDS} keywords once each $ref is counted where it is used` };
  }
  const outcome = await pool.run({ op: 'compile', hash: hashOf(schema), schema });
  switch (outcome.kind) {
    case 'done':
      return undefined;
    case 'unusable':
      return { tooComplex: false, problem: `not a usable JSON Schema (draft 2020-12): ${outcome.problem}` };
    case 'busy':
      return { busy: true, problem: 'every schema worker stayed busy; send it again shortly' };
    case 'over-budget':
      return { tooComplex: true, problem: `compiling the schema ${outcome.problem}` };
  }
}

export type SchemaVerdict = { busy: true } | { busy: false; errors: SchemaViolation[] };

/**
 * The violations of `input` against `schema` (at most 20, empty when it satisfies it), found
 * off the main thread. A check over its budget is a violation too (keyword `budget`): the input
 * may be valid, but the gateway will not spend more on it. `owner` (the trigger's workspace)
 * holds at most all the workers but one at a time (check-pool.ts).
 */
export async function schemaViolations(schema: JsonSchema, input: unknown, owner?: string): Promise<SchemaVerdict> {
  if (schema === true) return { busy: false, errors: [] };
  if (schema === false) return { busy: false, errors: [{ instancePath: '', keyword: 'false', message: 'the schema allows no value' }] };
  return verdict(await pool.run({ op: 'check', hash: hashOf(schema), schema, input: JSON.stringify(input) ?? 'null', owner }));
}

function verdict(outcome: CheckOutcome): SchemaVerdict {
  switch (outcome.kind) {
    case 'busy':
      return { busy: true };
    case 'done':
      return { busy: false, errors: outcome.errors };
    case 'unusable':
      return { busy: false, errors: [{ instancePath: '', keyword: 'schema', message: `the trigger's schema does not compile: ${outcome.problem}` }] };
    case 'over-budget':
      return {
        busy: false,
        errors: outcome.errors ?? [{ instancePath: '', keyword: 'budget', message: `checking the input against the schema ${outcome.problem}` }],
      };
  }
}

/** The stored trigger's object comes from the registry's cache: hashed once per object. */
function hashOf(schema: Record<string, unknown>): string {
  let hash = hashes.get(schema);
  if (!hash) {
    hash = createHash('sha256').update(JSON.stringify(schema)).digest('base64url');
    hashes.set(schema, hash);
  }
  return hash;
}

/** Ends the schema workers (tests). */
export function closeSchemaWorkers(): Promise<void> {
  return pool.close();
}
