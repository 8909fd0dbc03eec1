/** What the main thread and a schema-check worker say to each other (check-pool.ts, check-worker.ts). */

/** Contract §13: `details.errors` lists at most 20 violations (the worker imports it too). */
export const MAX_SCHEMA_ERRORS = 20;

export interface SchemaViolation {
  instancePath: string;
  keyword: string;
  message: string;
}

export type WorkerJob =
  | { id: number; op: 'compile'; hash: string; schema: Record<string, unknown> }
  /** `input` as JSON text: JSON.stringify and JSON.parse cost a fraction of a structured clone. */
  /** Sent without `schema` first (the hot path: the worker has it compiled); with it after the worker answers `missing`. */
  | { id: number; op: 'check'; hash: string; schema?: Record<string, unknown>; input: string };

export type WorkerReply =
  /** A check job without its schema, which this worker has not compiled (or evicted): send it again with it. */
  | { id: number; stage: 'missing' }
  /** A check job compiles its schema first (this worker had not): the compile budget applies… */
  | { id: number; stage: 'compiling' }
  /** …and the check's own budget starts once it is compiled. */
  | { id: number; stage: 'compiled' }
  /** The first violation, found by the run that stops there; the collected ones may follow. */
  | { id: number; stage: 'first'; errors: SchemaViolation[] }
  | { id: number; stage: 'done'; errors: SchemaViolation[] }
  /** The schema does not compile (a compile job: refused at PUT). */
  | { id: number; stage: 'unusable'; problem: string }
  /** The check threw (a stack overflow on a recursion the static rules could not place). */
  | { id: number; stage: 'failed'; problem: string };
