import type { IncomingHttpHeaders } from 'node:http';
import { fromBase64, fromHex, header } from '../schemes/signing';
import type { Recipe } from './schema';

/** More signatures than this in one request are not looked at (a header is not a work queue). */
export const MAX_SIGNATURES = 8;
/** Entries of a list or kv header looked at, valid or not: bounds the split whatever the header's length. */
const MAX_ENTRIES = 32;

const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/;

function fromBase64Url(text: string): Buffer | undefined {
  return text.length > 0 && BASE64URL.test(text) ? Buffer.from(text, 'base64url') : undefined;
}

export function decodeSignature(text: string, encoding: Recipe['signature']['encoding']): Buffer | undefined {
  if (encoding === 'hex') return fromHex(text);
  return encoding === 'base64' ? fromBase64(text) : fromBase64Url(text);
}

/** What the signature headers carry: the encoded signatures, and the timestamp of a kv header. */
export interface Presented {
  signatures: string[];
  timestamp?: string;
}

function firstSplit(entry: string, separators: readonly string[]): [string, string] | undefined {
  let at = -1;
  for (const separator of separators) {
    const index = entry.indexOf(separator);
    if (index > 0 && (at < 0 || index < at)) at = index;
  }
  return at < 0 ? undefined : [entry.slice(0, at), entry.slice(at + 1)];
}

function entries(value: string, separator: string): string[] {
  return value.split(separator, MAX_ENTRIES).map((entry) => entry.trim()).filter((entry) => entry !== '');
}

function stripPrefix(text: string, prefix: string | undefined): string | undefined {
  if (!prefix) return text;
  return text.startsWith(prefix) ? text.slice(prefix.length) : undefined;
}

/** One header's value read by the recipe's format; entries of unknown versions are skipped. */
function readHeader(value: string, recipe: Recipe, found: Presented): void {
  const s = recipe.signature;
  const push = (text: string | undefined) => {
    if (text !== undefined && text !== '' && found.signatures.length < MAX_SIGNATURES) found.signatures.push(text);
  };
  if (s.format === 'raw') return push(stripPrefix(value, s.prefix));
  if (s.format === 'list') {
    for (const entry of entries(value, s.listSeparator ?? ' ')) {
      if (!s.signatureKeys) {
        push(stripPrefix(entry, s.prefix));
        continue;
      }
      const pair = firstSplit(entry, s.listSeparator === ',' ? ['='] : [',', '=']);
      if (pair && s.signatureKeys.includes(pair[0])) push(stripPrefix(pair[1], s.prefix));
    }
    return;
  }
  for (const entry of entries(value, s.pairSeparator ?? ',')) {
    const pair = firstSplit(entry, ['=']);
    if (!pair) continue;
    const [key, text] = [pair[0].trim(), pair[1].trim()];
    if (key === s.timestampKey && found.timestamp === undefined) found.timestamp = text;
    else if (s.signatureKeys?.includes(key)) push(stripPrefix(text, s.prefix));
  }
}

/** Every signature header of the recipe, in order (Box: primary, then secondary). */
export function presented(headers: IncomingHttpHeaders, recipe: Recipe, signatureHeaders: readonly string[]): Presented {
  const found: Presented = { signatures: [] };
  for (const name of signatureHeaders) {
    const value = header(headers, name);
    if (value !== undefined) readHeader(value, recipe, found);
  }
  if (recipe.timestamp?.header) found.timestamp = header(headers, recipe.timestamp.header);
  return found;
}
