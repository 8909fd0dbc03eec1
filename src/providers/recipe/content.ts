import type { IncomingHttpHeaders } from 'node:http';
import type { Recipe } from './schema';

/** What the placeholders of signedContent stand for in one request. */
export interface ContentValues {
  raw: Buffer;
  timestamp?: string;
  id?: string;
  url: string;
  headers: IncomingHttpHeaders;
}

const PLACEHOLDER = /\{([a-z]+)(?::([A-Za-z0-9-]{1,64}))?\}/g;

/** A header's exact value as sent (the first, when repeated), for `{header:NAME}`. */
function exactHeader(headers: IncomingHttpHeaders, name: string): string {
  const value = headers[name.toLowerCase()];
  return (Array.isArray(value) ? value[0] : value) ?? '';
}

/**
 * The bytes signed: signedContent's literal text with each placeholder replaced, `{body}` by the
 * raw bytes as received (never a re-serialised body). Webhooks reach the engine only by POST,
 * so `{method}` is POST.
 */
export function signedBytes(recipe: Recipe, values: ContentValues): Buffer {
  const parts: Buffer[] = [];
  let from = 0;
  for (const match of recipe.signedContent.matchAll(PLACEHOLDER)) {
    parts.push(Buffer.from(recipe.signedContent.slice(from, match.index), 'utf8'));
    from = match.index + match[0].length;
    const [, name, argument] = match;
    switch (name) {
      case 'body':
        parts.push(values.raw);
        break;
      case 'timestamp':
        parts.push(Buffer.from(values.timestamp ?? '', 'utf8'));
        break;
      case 'id':
        parts.push(Buffer.from(values.id ?? '', 'utf8'));
        break;
      case 'method':
        parts.push(Buffer.from('POST'));
        break;
      case 'url':
        parts.push(Buffer.from(values.url, 'utf8'));
        break;
      case 'header':
        parts.push(Buffer.from(exactHeader(values.headers, argument), 'utf8'));
        break;
    }
  }
  parts.push(Buffer.from(recipe.signedContent.slice(from), 'utf8'));
  return Buffer.concat(parts);
}
