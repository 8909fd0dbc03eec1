import { schemaCompileProblem, type JsonSchema } from '../json-schema/compile';
import { Refusal } from '../outcomes/refusal';

/**
 * The last check of a trigger's schema at PUT (contract §13.1), after the body's zod check
 * (shape, meta-schema, static rules): it must compile, in a schema worker, within its budget.
 * One that does not resolve (a remote `$ref`) is 400 `invalid_schema` like the other schema
 * issues; one over the budget is 400 `schema_too_complex`; no worker free to compile it is 503 `busy`.
 */
export async function admitSchema(schema: JsonSchema): Promise<void> {
  const found = await schemaCompileProblem(schema);
  if (!found) return;
  if ('busy' in found) throw new Refusal('busy', found.problem);
  if (found.tooComplex) throw new Refusal('schema_too_complex', found.problem, { path: 'schema' });
  throw new Refusal('invalid_schema', 'the body does not match the schema', [{ code: 'custom', path: 'schema', message: found.problem }]);
}
