import { TextDecoder } from 'node:util';
import { HttpError } from '../http/errors';
import { classifyContentType } from './content-type';
import { FieldCollector } from './fields';
import { parseMultipart, type MultipartLimits } from './multipart';
import { parseJsonSafely } from './safe-json';

export interface ParsedBody {
  /** The body's fields by name (contract §4 `input`). */
  input: Record<string, unknown>;
  /** The body as parsed, before it was wrapped into `input` (used for `common` and keyField). */
  value: unknown;
}

/** Turns raw body bytes into the event's `input`. Throws HttpError 400/413/415. */
export async function parseBody(
  raw: Buffer,
  contentType: string | undefined,
  limits: MultipartLimits,
): Promise<ParsedBody> {
  if (raw.length === 0) return { input: {}, value: {} };
  const media = classifyContentType(contentType);
  if (!media) {
    throw new HttpError('UNSUPPORTED_MEDIA_TYPE', 'unsupported content type', {
      contentType: contentType ?? null,
      accepted: ['application/json', 'application/*+json', 'application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain'],
    });
  }
  switch (media.kind) {
    case 'json':
      return wrap(parseJson(decode(raw, media.charset)));
    case 'text':
      return wrap(decode(raw, media.charset));
    case 'form':
      return wrap(parseForm(decode(raw, media.charset), limits.maxFields));
    case 'multipart':
      return wrap(await parseMultipart(raw, contentType as string, limits));
  }
}

/** A UTF-8 JSON body as bytes → its value; 400 for invalid UTF-8 or malformed JSON. */
export function parseJsonBytes(raw: Buffer): unknown {
  return parseJson(decode(raw));
}

function wrap(value: unknown): ParsedBody {
  const isObject = value !== null && typeof value === 'object' && !Array.isArray(value);
  return { input: isObject ? (value as Record<string, unknown>) : { body: value }, value };
}

function decode(raw: Buffer, charset = 'utf-8'): string {
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charset, { fatal: true, ignoreBOM: false });
  } catch {
    throw new HttpError('UNSUPPORTED_MEDIA_TYPE', `unsupported charset ${JSON.stringify(charset.slice(0, 40))}`);
  }
  try {
    return decoder.decode(raw);
  } catch {
    throw new HttpError('BAD_REQUEST', `the body is not valid ${charset}`, { reason: 'invalid_encoding' });
  }
}

function parseJson(text: string): unknown {
  try {
    return parseJsonSafely(text);
  } catch (error) {
    throw new HttpError('BAD_REQUEST', 'malformed JSON body', { reason: (error as Error).message.slice(0, 200) });
  }
}

/** URL-encoded form; a lone `payload` field holding JSON (Slack and others) is that JSON. */
function parseForm(text: string, maxFields: number): Record<string, unknown> | unknown {
  const params = new URLSearchParams(text);
  const fields = new FieldCollector();
  let count = 0;
  for (const [name, value] of params) {
    if (++count > maxFields) {
      throw new HttpError('PAYLOAD_TOO_LARGE', 'the number of fields exceeds the limit', { limit: 'the number of fields', max: maxFields });
    }
    fields.add(name, value);
  }
  const result = fields.result();
  const keys = Object.keys(result);
  if (keys.length === 1 && keys[0] === 'payload' && typeof result.payload === 'string' && /^\s*[[{]/.test(result.payload)) {
    return parseJson(result.payload);
  }
  return result;
}
