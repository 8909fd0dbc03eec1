import { Refusal } from '../outcomes/refusal';
import { schemaViolations, type JsonSchema } from '../json-schema/compile';

/**
 * Contract §13: after parsing and inputFormat coercion, `input` must satisfy the trigger's
 * schema; otherwise 400 `schema_invalid` with up to 20 `{ instancePath, keyword, message }`.
 * The check runs in a schema worker within its budget (§13.1, src/json-schema/check-pool.ts).
 */
export async function checkInputSchema(input: unknown, schema: JsonSchema | undefined, workspaceId: string): Promise<void> {
  if (schema === undefined) return;
  const verdict = await schemaViolations(schema, input, workspaceId);
  if (verdict.busy) throw schemaWorkersBusy();
  const { errors } = verdict;
  if (errors.length > 0) throw new Refusal('schema_invalid', "the input does not match the trigger's schema", { errors });
}

/** 503 `busy`: no schema worker was free within its wait (deliveries and the validate preview). */
export function schemaWorkersBusy(): Refusal {
  return new Refusal('busy', 'every schema worker is busy; send it again shortly');
}
