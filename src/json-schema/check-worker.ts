import { parentPort } from 'node:worker_threads';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { LRUCache } from 'lru-cache';
import { newAjv } from './ajv';
import { MAX_SCHEMA_ERRORS, type SchemaViolation, type WorkerJob, type WorkerReply } from './messages';

/**
 * A schema-check worker (check-pool.ts starts it): compiles schemas and checks inputs against
 * them, off the main thread. Its time is bounded by the pool's deadline (it is terminated) and
 * its memory by the worker's resourceLimits (it dies, the process does not).
 */

/**
 * Collecting every violation (ajv `allErrors`) builds one object per failing keyword and value
 * before any can be dropped, so it runs only while (values in the input) × (keywords in the
 * schema) stays under this; beyond it the sender is shown the first violation only.
 */
const COLLECT_BUDGET = 200_000;
/** Compiled schemas kept (each costs a few closures). */
const CACHE_ENTRIES = 1000;
const ROOT_ID = 'urn:ingress-gateway:trigger-schema';

interface Compiled {
  firstError: ValidateFunction;
  allErrors?: ValidateFunction;
  schema: Record<string, unknown>;
  keywords: number;
}

const firstErrorAjv = newAjv(false);
const allErrorsAjv = newAjv(true);
const cache = new LRUCache<string, Compiled>({ max: CACHE_ENTRIES });

// Each ajv compiles the draft 2020-12 meta-schema on its first use: not within a job's budget.
compileFrom(firstErrorAjv, { type: 'object' });
compileFrom(allErrorsAjv, { type: 'object' });
parentPort!.postMessage('ready');
parentPort!.on('message', (job: WorkerJob) => {
  const reply = (message: WorkerReply) => parentPort!.postMessage(message);
  let compiled = cache.get(job.hash);
  if (!compiled) {
    if (job.schema === undefined) return reply({ id: job.id, stage: 'missing' });
    if (job.op === 'check') reply({ id: job.id, stage: 'compiling' });
    try {
      compiled = compile(job.schema);
    } catch (error) {
      return reply({ id: job.id, stage: 'unusable', problem: String((error as Error).message).slice(0, 300) });
    }
    cache.set(job.hash, compiled);
    if (job.op === 'check') reply({ id: job.id, stage: 'compiled' });
  }
  if (job.op === 'compile') return reply({ id: job.id, stage: 'done', errors: [] });
  try {
    const input: unknown = JSON.parse(job.input);
    if (compiled.firstError(input)) return reply({ id: job.id, stage: 'done', errors: [] });
    const first = violations(compiled.firstError.errors);
    if (countValues(input, COLLECT_BUDGET / compiled.keywords) * compiled.keywords > COLLECT_BUDGET) {
      return reply({ id: job.id, stage: 'done', errors: first });
    }
    reply({ id: job.id, stage: 'first', errors: first });
    compiled.allErrors ??= compileFrom(allErrorsAjv, compiled.schema);
    compiled.allErrors(input);
    reply({ id: job.id, stage: 'done', errors: violations(compiled.allErrors.errors) });
  } catch (error) {
    reply({ id: job.id, stage: 'failed', problem: String((error as Error).message).slice(0, 200) });
  }
});

/** The first-error validator only: the collecting one is compiled when an input first needs it. */
function compile(schema: Record<string, unknown>): Compiled {
  return { firstError: compileFrom(firstErrorAjv, schema), schema, keywords: Math.max(1, countValues(schema, Infinity)) };
}

/**
 * Without an `$id` ajv cannot resolve `$ref: "#"` (a tree: `items: { $ref: "#" }`) when it does
 * not keep the schemas it compiles (addUsedSchema: false): the root gets one of its own.
 */
function compileFrom(ajv: ReturnType<typeof newAjv>, schema: Record<string, unknown>): ValidateFunction {
  const rooted = typeof schema.$id === 'string' ? schema : { $id: ROOT_ID, ...schema };
  try {
    return ajv.compile(rooted);
  } finally {
    // Ajv keeps every schema it compiled; the LRU above is the only cache that should hold them.
    ajv.removeSchema(rooted);
  }
}

/** Values (objects, arrays, scalars) in a JSON value, counting stops a little past `limit`. */
function countValues(value: unknown, limit: number): number {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && count <= limit) {
    const next = stack.pop();
    count += 1;
    if (next === null || typeof next !== 'object') continue;
    for (const child of Array.isArray(next) ? next : Object.values(next)) stack.push(child);
  }
  return count;
}

function violations(errors: ErrorObject[] | null | undefined): SchemaViolation[] {
  return (errors ?? []).slice(0, MAX_SCHEMA_ERRORS).map((error) => ({
    instancePath: error.instancePath,
    keyword: error.keyword,
    message: error.message ?? error.keyword,
  }));
}
