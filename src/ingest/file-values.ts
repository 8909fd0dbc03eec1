import { withoutControlCharacters } from '../files/file-name';
import { Refusal } from '../outcomes/refusal';
import { isUrlFileValue } from '../body/safe-json';

/**
 * Contract §2.5, "only the gateway mints file values". A file value the gateway built from a
 * multipart part (inline, or stored by reference) is remembered here; a sender's JSON, form or
 * text part can never produce one of these objects, whatever it writes.
 */
const minted = new WeakSet<object>();

export function mint<T extends object>(value: T): T {
  minted.add(value);
  return value;
}

/** A base64 data URL: `data:<mime>[;param…];base64,<standard base64, padded>`. */
const DATA_URL = /^data:[^,;]*(?:;[^,;]*)*;base64,/i;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * One element of a field declared `file[]`: the value to publish, or undefined when it is not a
 * file value at all (the caller's 400 invalid_field). A value the gateway minted passes as it
 * is. A sender's value may only be inline, `{ type: "file", data: "data:…;base64,…" }`, its
 * base64 well-formed and its bytes within `maxFileBytes` (413 file_too_large); its `size`, when
 * given, must be the decoded size, and its name loses control and bidi characters. A sender's
 * `{ type: "url" }`, or `data` in any other scheme (s3:, http:, file:, …), would be published as
 * if the gateway had stored it: 400 file_value_not_allowed.
 */
export function checkFileValue(value: unknown, field: string, maxFileBytes: number): object | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  if (minted.has(value)) return value;
  const file = value as { type?: unknown; data?: unknown; size?: unknown; name?: unknown };
  if (file.type === 'url') throw notAllowed(field, 'a file value of type url names an object only the gateway stores');
  if (file.type !== 'file' || typeof file.data !== 'string') return undefined;
  const prefix = DATA_URL.exec(file.data);
  if (!prefix) throw notAllowed(field, 'an inline file value carries its bytes as a data:…;base64, URL, nothing else');
  const base64 = file.data.slice(prefix[0].length);
  if (!BASE64.test(base64)) return undefined;
  const size = (base64.length / 4) * 3 - (base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0);
  if (size > maxFileBytes) {
    throw new Refusal('file_too_large', 'a file exceeds the limit', { limit: 'a file', max: maxFileBytes, field });
  }
  if (file.size !== undefined && file.size !== size) return undefined;
  return typeof file.name === 'string' ? { ...file, name: withoutControlCharacters(file.name) } : file;
}

/** 400 file_value_not_allowed for a `{ type: "url" }` object at `path` of a body the sender wrote. */
export function foreignFileValue(path: string): Refusal {
  return new Refusal('file_value_not_allowed', `${path}: a file value of type url names an object only the gateway stores`, {
    path,
    problem: 'only the gateway mints file values by reference',
  });
}

/**
 * Contract §13.1, "file values only the gateway mints, anywhere". The published query and
 * headers, and a form's or multipart body's fields, are flat: their values are strings (arrays
 * of strings; the query parser is `simple`, src/app.ts) or file values the gateway minted. The
 * one place a `{ type: "url", data }` shape can form there is the object itself, as with
 * `?type=url&data=s3://…`: 400 file_value_not_allowed naming `query`, `headers` or `$` (the body).
 */
export function refuseUrlShape(where: 'query' | 'headers' | '$', published: Record<string, unknown>): void {
  if (isUrlFileValue(published)) throw foreignFileValue(where);
}

function notAllowed(field: string, problem: string): Refusal {
  return new Refusal('file_value_not_allowed', `field ${field}: only the gateway mints file values by reference`, { field, problem });
}
