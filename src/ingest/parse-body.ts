import { Refusal } from '../outcomes/refusal';
import { classifyContentType } from '../body/content-type';
import { FieldCollector } from './fields';
import { parseMultipart, type MultipartLimits } from './multipart';
import { foreignFileValue, refuseUrlShape } from './file-values';
import { decodeText, parseJsonText } from '../body/text';

export interface ParsedBody {
  /** The body's fields by name (contract §4 `input`). */
  input: Record<string, unknown>;
  /** The body as parsed, before it was wrapped into `input` (used for `common` and keyField). */
  value: unknown;
  /** A multipart body's identity (contract §5), taken while it was parsed; other bodies' is their bytes' sha256 (bodyIdentity). */
  multipartIdentity?: string;
}

/** Turns raw body bytes into the event's `input`. Throws a Refusal (400/413/415). */
export async function parseBody(
  raw: Buffer,
  contentType: string | undefined,
  limits: MultipartLimits,
): Promise<ParsedBody> {
  if (raw.length === 0) return { input: {}, value: {} };
  const media = classifyContentType(contentType);
  if (!media) {
    throw new Refusal('unsupported_media_type', 'unsupported content type', {
      contentType: contentType ?? null,
      accepted: ['application/json', 'application/*+json', 'application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain'],
    });
  }
  switch (media.kind) {
    case 'json':
      return wrap(parseJsonText(decodeText(raw, media.charset), foreignFileValue));
    case 'text':
      return wrap(decodeText(raw, media.charset));
    case 'form':
      return wrap(flat(parseForm(decodeText(raw, media.charset), limits.maxFields)));
    case 'multipart': {
      const { fields, bodyHash } = await parseMultipart(raw, contentType as string, limits);
      return { ...wrap(flat(fields)), multipartIdentity: bodyHash };
    }
  }
}

/** A form's or multipart body's fields: `type=url&data=s3://…` would be a file value the sender minted (contract §2.5). */
function flat(fields: unknown): unknown {
  if (fields !== null && typeof fields === 'object' && !Array.isArray(fields)) refuseUrlShape('$', fields as Record<string, unknown>);
  return fields;
}

function wrap(value: unknown): ParsedBody {
  const isObject = value !== null && typeof value === 'object' && !Array.isArray(value);
  return { input: isObject ? (value as Record<string, unknown>) : { body: value }, value };
}

/** URL-encoded form; a lone `payload` field holding JSON (Slack and others) is that JSON. */
function parseForm(text: string, maxFields: number): Record<string, unknown> | unknown {
  const fields = new FieldCollector();
  for (const [name, value] of formFields(text, maxFields)) fields.add(name, value);
  const result = fields.result();
  const keys = Object.keys(result);
  if (keys.length === 1 && keys[0] === 'payload' && typeof result.payload === 'string' && /^\s*[[{]/.test(result.payload)) {
    return parseJsonText(result.payload, foreignFileValue);
  }
  return result;
}

/**
 * The fields of a form body, one `&`-separated pair at a time, decoded exactly as
 * URLSearchParams decodes them. Refused as soon as there are more than `maxFields`: a 1 MB
 * `a&a&a…` is half a million pairs, and decoding them all before counting took about 23 MB.
 */
export function* formFields(text: string, maxFields: number): Generator<[string, string]> {
  let count = 0;
  for (let start = 0; start < text.length; ) {
    let end = text.indexOf('&', start);
    if (end === -1) end = text.length;
    // URLSearchParams drops a `?` that starts the whole text only: a later pair keeps it.
    const pair = start === 0 ? text.slice(0, end) : text.slice(start - 1, end);
    for (const field of new URLSearchParams(pair)) {
      if (++count > maxFields) {
        throw new Refusal('too_many_fields', 'the number of fields exceeds the limit', { limit: 'the number of fields', max: maxFields });
      }
      yield field;
    }
    start = end + 1;
  }
}
