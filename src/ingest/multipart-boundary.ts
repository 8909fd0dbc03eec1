/**
 * The boundary of a multipart Content-Type, read as busboy reads it (its `parseContentType`:
 * RFC 7231 tokens, `;`-separated parameters with optional whitespace, quoted strings with
 * backslash escapes, parameter names in any letter case, the first of a repeated one), so that
 * the part counter (multipart-parts.ts) searches for the delimiter busboy searches for.
 * busboy does not export its parser: this is that parser, cut down to the boundary.
 * Undefined when the header does not parse or names no boundary.
 */
export function multipartBoundary(contentType: string): string | undefined {
  const afterType = mediaTypeEnd(contentType);
  if (afterType === undefined) return undefined;
  return parameters(contentType, afterType)?.get('boundary');
}

// RFC 7230 tchar; and qdtext (HTAB, SP, the visible characters but `"` and `\`, obs-text), as busboy's tables.
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]$/;
const isToken = (text: string, i: number) => i < text.length && TOKEN.test(text[i]);
function isQuotedText(code: number): boolean {
  return code === 9 || code === 32 || code === 33 || (code >= 35 && code <= 126 && code !== 92) || (code >= 128 && code <= 255);
}
const isSpace = (text: string, i: number) => text[i] === ' ' || text[i] === '\t';

/** Where `type/subtype` ends, or undefined when either is missing or not a token. */
function mediaTypeEnd(text: string): number | undefined {
  let i = 0;
  while (isToken(text, i)) i++;
  if (i === 0 || text[i] !== '/') return undefined;
  const subtypeStart = ++i;
  while (isToken(text, i)) i++;
  return i === subtypeStart ? undefined : i;
}

/** The parameters from `i` on, names in lower case, the first of each kept; undefined when malformed. */
function parameters(text: string, i: number): Map<string, string> | undefined {
  const params = new Map<string, string>();
  while (i < text.length) {
    while (isSpace(text, i)) i++;
    if (i === text.length) break;
    if (text[i++] !== ';') return undefined;
    while (isSpace(text, i)) i++;
    const nameStart = i;
    while (isToken(text, i)) i++;
    if (i === text.length || text[i] !== '=') return undefined;
    const name = text.slice(nameStart, i++).toLowerCase();
    const value = text[i] === '"' ? quotedString(text, i) : tokenValue(text, i);
    if (!value) return undefined;
    if (!params.has(name)) params.set(name, value.value);
    i = value.end;
  }
  return params;
}

function tokenValue(text: string, start: number): { value: string; end: number } | undefined {
  let i = start;
  while (isToken(text, i)) i++;
  return i === start ? undefined : { value: text.slice(start, i), end: i };
}

/**
 * A quoted string opening at `open`. As busboy: `\"` and `\\` are the escaped character; a
 * backslash before any other character stays, with it.
 */
function quotedString(text: string, open: number): { value: string; end: number } | undefined {
  let value = '';
  for (let i = open + 1; i < text.length; i++) {
    const char = text[i];
    if (char === '"') return { value, end: i + 1 };
    if (char === '\\') {
      if (i + 1 === text.length) return undefined;
      const next = text[++i];
      if (next !== '"' && next !== '\\') {
        if (!isQuotedText(next.charCodeAt(0))) return undefined;
        value += '\\';
      }
      value += next;
      continue;
    }
    if (!isQuotedText(char.charCodeAt(0))) return undefined;
    value += char;
  }
  return undefined;
}
