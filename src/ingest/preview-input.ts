import type { IncomingHttpHeaders } from 'node:http';
import type { Config } from '../config/schema';
import { schemaViolations, type SchemaViolation } from '../json-schema/compile';
import type { StoredTrigger } from '../registry/schemas';
import { applyInputFormat } from './coerce';
import { schemaWorkersBusy } from './input-schema';
import { parseBody } from './parse-body';

export interface InputPreview {
  valid: boolean;
  errors: SchemaViolation[];
  /** As the event would carry it. */
  input: Record<string, unknown>;
}

/**
 * POST /admin/triggers/{path}/validate (contract §13): a sample body read as the trigger would
 * read it (same parser, limits and inputFormat coercion), then checked against its schema. A
 * body the trigger would refuse before the schema (malformed, wrong type for inputFormat) throws
 * the same 4xx. Nothing is claimed, charged or published.
 */
export async function previewInput(config: Config, trigger: StoredTrigger, raw: Buffer, headers: IncomingHttpHeaders): Promise<InputPreview> {
  const parsed = await parseBody(raw, headers['content-type'], {
    maxFileBytes: config.MAX_FILE_BYTES,
    maxFiles: config.MAX_FILES,
    maxFields: config.MAX_FIELDS,
    maxFieldBytes: config.MAX_BODY_BYTES,
  });
  applyInputFormat(parsed.input, trigger.inputFormat, config.MAX_FILE_BYTES);
  const verdict = trigger.schema === undefined ? { busy: false as const, errors: [] } : await schemaViolations(trigger.schema, parsed.input, trigger.workspaceId);
  if (verdict.busy) throw schemaWorkersBusy();
  const { errors } = verdict;
  return { valid: errors.length === 0, errors, input: parsed.input };
}
