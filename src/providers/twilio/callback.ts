import { TextDecoder } from 'node:util';
import { Refusal } from '../../outcomes/refusal';
import { parseJsonBytes } from '../../body/text';
import type { TwilioFields } from './map';
import { bodyHashParameter } from './signature';

/**
 * A verified Twilio callback's parameters: a form body's fields, or the JSON variant's object
 * (signed through `bodySHA256`). Its Content-Type was checked before (the preset's `bodyKind`,
 * the same 415 as on a trigger); 400/413 for a signed body that cannot be read.
 */
export function parseTwilioCallback(raw: Buffer, request: { url: string; maxFields: number }): TwilioFields {
  if (bodyHashParameter(request.url) !== undefined) return fieldsOfJson(parseJsonBytes(raw));
  return formFields(raw, request.maxFields);
}

function formFields(raw: Buffer, maxFields: number): TwilioFields {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(raw);
  } catch {
    throw new Refusal('invalid_encoding', 'the body is not valid UTF-8');
  }
  const first = new Map<string, string>();
  let count = 0;
  for (const [name, value] of new URLSearchParams(text)) {
    if (++count > maxFields) throw new Refusal('too_many_fields', 'more parameters than MAX_FIELDS', { max: maxFields });
    if (!first.has(name)) first.set(name, value);
  }
  // fromEntries defines own properties: a `__proto__` parameter stays a plain field.
  return Object.fromEntries(first);
}

/** The JSON variant's object as flat parameters (scalars as Twilio would have form-encoded them). */
function fieldsOfJson(value: unknown): TwilioFields {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Refusal('invalid_schema', 'a Twilio JSON callback is an object of parameters');
  }
  const fields: Record<string, string> = {};
  for (const [name, field] of Object.entries(value)) {
    if (field === null || field === undefined) continue;
    fields[name] = typeof field === 'object' ? JSON.stringify(field) : String(field);
  }
  return fields;
}
