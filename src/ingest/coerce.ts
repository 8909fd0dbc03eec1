import { Refusal } from '../outcomes/refusal';
import type { FieldType } from '../registry/schemas';
import { checkFileValue, foreignFileValue } from './file-values';
import { ForeignFileValue, parseJsonSafely } from '../body/safe-json';

export interface DeclaredField {
  name: string;
  type: FieldType;
}

const INVALID = Symbol('invalid');

/**
 * Applies a trigger's inputFormat: strings are coerced to the declared type, a value that
 * cannot be its type is a 400 naming the field, missing fields are fine. A `file[]` field's
 * values are checked by checkFileValue (400 file_value_not_allowed, 413 file_too_large).
 */
export function applyInputFormat(input: Record<string, unknown>, format: DeclaredField[] | undefined, maxFileBytes: number): void {
  if (!format) return;
  const problems: Array<{ field: string; expected: FieldType }> = [];
  for (const field of format) {
    if (!Object.hasOwn(input, field.name)) continue;
    const value = coerce(input[field.name], field, maxFileBytes);
    if (value === INVALID) problems.push({ field: field.name, expected: field.type });
    else Object.defineProperty(input, field.name, { value, enumerable: true, writable: true, configurable: true });
  }
  if (problems.length > 0) {
    throw new Refusal('invalid_field', `invalid value for ${problems.map((p) => p.field).join(', ')}`, { fields: problems });
  }
}

function coerce(value: unknown, { name, type }: DeclaredField, maxFileBytes: number): unknown {
  switch (type) {
    case 'string':
      return typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : INVALID;
    case 'number':
      return toNumber(value);
    case 'boolean':
      return toBoolean(value);
    case 'object':
      return asKind(typeof value === 'string' ? parseOrInvalid(value, name) : value, 'object');
    case 'array':
      return asKind(typeof value === 'string' ? parseOrInvalid(value, name) : value, 'array');
    case 'file[]': {
      // A form or text part carries a file value as JSON text.
      const files = (Array.isArray(value) ? value : [value]).map((item) =>
        checkFileValue(typeof item === 'string' ? parseOrInvalid(item, name) : item, name, maxFileBytes),
      );
      return files.every((file) => file !== undefined) ? files : INVALID;
    }
  }
}

function toNumber(value: unknown): unknown {
  if (typeof value === 'number') return Number.isFinite(value) ? value : INVALID;
  if (typeof value !== 'string' || value.trim() === '') return INVALID;
  const n = Number(value);
  return Number.isFinite(n) ? n : INVALID;
}

const TRUE_TEXTS = new Set(['true', '1', 'on']);
const FALSE_TEXTS = new Set(['false', '0', 'off']);

/** A form's boolean, in any letter case (`TRUE`, `False`, `On`). */
function toBoolean(value: unknown): unknown {
  if (typeof value === 'boolean') return value;
  if (typeof value !== 'string') return INVALID;
  const text = value.toLowerCase();
  if (TRUE_TEXTS.has(text)) return true;
  if (FALSE_TEXTS.has(text)) return false;
  return INVALID;
}

/** A field's JSON text; like a JSON body it may not carry a `{ type: "url", data }` object (contract §2.5). */
function parseOrInvalid(text: string, field: string): unknown {
  try {
    return parseJsonSafely(text, { forbidUrlFileValues: true });
  } catch (error) {
    if (error instanceof ForeignFileValue) throw foreignFileValue(`$.${field}${error.path.slice(1)}`);
    return INVALID;
  }
}

function asKind(value: unknown, kind: 'object' | 'array'): unknown {
  if (value === INVALID || value === null || typeof value !== 'object') return INVALID;
  return Array.isArray(value) === (kind === 'array') ? value : INVALID;
}
