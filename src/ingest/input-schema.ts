import { Refusal } from '../outcomes/refusal';
import { schemaViolations, type JsonSchema } from '../json-schema/compile';

/**
 * Contract §13: after parsing and inputFormat coercion, `input` must satisfy the trigger's
 * schema; otherwise 400 `schema_invalid` with up to 20 `{ instancePath, keyword, message }`.
 */
export function checkInputSchema(input: unknown, schema: JsonSchema | undefined): void {
  if (schema === undefined) return;
  const errors = schemaViolations(schema, input);
  if (errors.length > 0) throw new Refusal('schema_invalid', "the input does not match the trigger's schema", { errors });
}
