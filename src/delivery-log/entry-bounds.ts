import type { DeliveryEntry } from './delivery-log';

/** Contract §13.1: an entry is at most this many bytes serialized (JSON, UTF-8). */
export const MAX_ENTRY_BYTES = 4096;
/** A schema error's `instancePath` (property names the sender chose) is cut to this many characters. */
export const MAX_PATH_CHARS = 256;
/** Any other string a sender (or a tenant's schema) may have chosen: keys, ids, kinds, messages. */
const MAX_TEXT_CHARS = 256;
const MAX_KEYWORD_CHARS = 64;
/** When even that is too big (escapes inflate a string up to 6 bytes a character), the last cut. */
const LAST_RESORT_CHARS = 64;

/** The entry's fields whose text can come from the request (headers, the forwarded-for chain). */
const SENDER_FIELDS = ['requestId', 'eventId', 'idempotencyKey', 'deliveryId', 'kind', 'clientIp', 'reason', 'outcome'] as const;

/**
 * The entry cut to the contract's bounds: every string a sender can choose cut to 256
 * characters, a schema error's path, keyword and message cut, and as many of the errors as
 * fit in 4 KiB; past that the diagnostics are dropped and the strings cut harder. The errors
 * never carry a value of the body (src/json-schema reports paths and the schema's words).
 */
export function boundedEntry(entry: DeliveryEntry): DeliveryEntry {
  cutFields(entry, MAX_TEXT_CHARS);
  if (entry.diagnostics) entry.diagnostics = boundedDiagnostics(entry.diagnostics);
  // Most entries are a few hundred bytes: an upper bound that needs no serializing settles them.
  if (sizeBound(entry) <= MAX_ENTRY_BYTES) return entry;
  let bytes = serializedBytes(entry);
  if (bytes <= MAX_ENTRY_BYTES) return entry;
  const errors = entry.diagnostics?.errors;
  if (Array.isArray(errors)) {
    // Drop errors from the end until the entry fits (each one's size known: no re-serializing).
    let kept = errors.length;
    while (kept > 0 && bytes > MAX_ENTRY_BYTES) {
      kept--;
      bytes -= serializedBytes(errors[kept]) + (kept > 0 ? 1 : 0);
    }
    entry.diagnostics = { errors: errors.slice(0, kept) };
    if (bytes <= MAX_ENTRY_BYTES) return entry;
  }
  delete entry.diagnostics;
  cutFields(entry, LAST_RESORT_CHARS);
  return entry;
}

export function serializedBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value));
}

/** Bytes of an entry's keys, punctuation and numbers, at most (13 keys, 3 numbers of up to 24 characters). */
const ENTRY_FRAME_BYTES = 400;
/** A character of a string serialized takes at most 6 bytes (`\u0001`). */
const MAX_BYTES_PER_CHAR = 6;

/** At least the entry's serialized size, counted without serializing it; Infinity with schema errors. */
function sizeBound(entry: DeliveryEntry): number {
  let chars = entry.at.length;
  for (const field of SENDER_FIELDS) {
    const value = entry[field];
    if (typeof value === 'string') chars += value.length;
  }
  let frame = ENTRY_FRAME_BYTES;
  if (entry.diagnostics) {
    if ('errors' in entry.diagnostics) return Infinity;
    for (const [name, value] of Object.entries(entry.diagnostics)) {
      chars += name.length;
      if (typeof value === 'string') chars += value.length;
      else if (typeof value === 'object' && value !== null) return Infinity;
      frame += 30; // quotes, colon, comma, and a number or null
    }
  }
  return chars * MAX_BYTES_PER_CHAR + frame;
}

function cutFields(entry: DeliveryEntry, chars: number): void {
  for (const field of SENDER_FIELDS) {
    const value = entry[field];
    if (typeof value === 'string' && value.length > chars) entry[field] = value.slice(0, chars);
  }
}

function boundedDiagnostics(diagnostics: Record<string, unknown>): Record<string, unknown> {
  const errors = diagnostics.errors;
  if (Array.isArray(errors)) return { errors: errors.map(boundedError) };
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(diagnostics)) out[name] = typeof value === 'string' ? cut(value, MAX_TEXT_CHARS) : value;
  return out;
}

function boundedError(error: unknown): { instancePath: string; keyword: string; message: string } {
  const { instancePath, keyword, message } = (error ?? {}) as Record<string, unknown>;
  return {
    instancePath: cut(String(instancePath ?? ''), MAX_PATH_CHARS),
    keyword: cut(String(keyword ?? ''), MAX_KEYWORD_CHARS),
    message: cut(String(message ?? ''), MAX_TEXT_CHARS),
  };
}

function cut(text: string, chars: number): string {
  return text.length > chars ? text.slice(0, chars) : text;
}
