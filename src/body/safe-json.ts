/**
 * JSON.parse that drops `__proto__` keys and `constructor.prototype` (as secure-json-parse
 * does), so no later merge by a consumer can change an object's prototype. The reviver
 * only runs when the text mentions one of those keys or has a `\u` escape (which can spell
 * one, e.g. `"\u005f_proto__"`).
 *
 * With `forbidUrlFileValues` (a request body, contract §2.5) a file value of type url (an object
 * with `"type": "url"` and a `data`) anywhere in the value throws a ForeignFileValue naming its
 * path: only the gateway mints those, and JSON.parse never returns a value the gateway minted.
 * An object with `"type": "url"` and no `data` is no file value but a sender's own data (a
 * Telegram message's link entity is `{ "offset", "length", "type": "url" }`) and passes. The
 * same reviver looks for them, so the text is walked once; it only runs when the text holds a
 * `"url"` token (or an escape).
 */
export function parseJsonSafely(text: string, options: { forbidUrlFileValues?: boolean } = {}): unknown {
  assertDepth(text);
  const escaped = text.includes('\\u');
  const stripKeys = escaped || text.includes('__proto__') || text.includes('prototype');
  const findUrls = options.forbidUrlFileValues === true && (escaped || text.includes('"url"'));
  if (!stripKeys && !findUrls) return JSON.parse(text);
  let urlFound = false;
  const value: unknown = JSON.parse(text, function (key, value) {
    if (key === '__proto__') return undefined;
    if (key === 'constructor' && value && typeof value === 'object' && Object.hasOwn(value, 'prototype')) {
      return undefined;
    }
    if (findUrls && !urlFound && isUrlFileValue(value)) urlFound = true;
    return value;
  });
  if (urlFound) throw new ForeignFileValue(pathOfUrlFileValue(value, '$') ?? '$');
  return value;
}

/** A `{ type: "url", data }` object in a request body: only the gateway mints those (contract §2.5). */
export class ForeignFileValue extends Error {
  constructor(readonly path: string) {
    super(`a file value of type url at ${path}`);
  }
}

/** A `{ type: "url", data }` object: the shape of a file value by reference (contract §2.5, §12). */
export function isUrlFileValue(value: unknown): boolean {
  return (
    value !== null &&
    typeof value === 'object' &&
    !Array.isArray(value) &&
    (value as { type?: unknown }).type === 'url' &&
    Object.hasOwn(value, 'data')
  );
}

/** Where the first `{ type: "url", data }` object is (only walked once one is known to be there). */
function pathOfUrlFileValue(value: unknown, path: string): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  if (isUrlFileValue(value)) return path;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = pathOfUrlFileValue(value[i], `${path}[${i}]`);
      if (found) return found;
    }
    return undefined;
  }
  for (const [key, item] of Object.entries(value)) {
    const found = pathOfUrlFileValue(item, /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`);
    if (found) return found;
  }
  return undefined;
}

/**
 * Deepest nesting of arrays and objects accepted. JSON.parse itself copes with far more, but
 * the event built from it must be serialised again (JSON.stringify recurses and throws a
 * RangeError at some thousands of levels) and read by consumers whose parsers stop earlier
 * (Jackson's default limit is 1000, Python's recursion limit about 1000). No real webhook
 * nests past a few dozen levels.
 */
export const MAX_JSON_DEPTH = 256;

/** Throws a SyntaxError when `text` nests arrays/objects deeper than MAX_JSON_DEPTH (strings skipped). */
function assertDepth(text: string): void {
  if (openingsAtMost(text, MAX_JSON_DEPTH)) return; // cannot nest that deep: skip the scan
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // a backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_JSON_DEPTH) throw new SyntaxError(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
}

/** True when `text` has at most `max` `[` and `{` in all (indexOf is native and fast; a char loop is not). */
function openingsAtMost(text: string, max: number): boolean {
  let count = 0;
  for (const bracket of ['[', '{']) {
    for (let i = text.indexOf(bracket); i !== -1; i = text.indexOf(bracket, i + 1)) {
      if (++count > max) return false;
    }
  }
  return true;
}

/** Field names that must never become keys set by assignment on a plain object. */
export function isForbiddenKey(name: string): boolean {
  return name === '__proto__' || name === 'constructor' || name === 'prototype';
}

/**
 * About how many bytes of heap JSON.parse takes for these bytes, measured on V8 (Node 20 and
 * 24): every object or array about 64 bytes, every key 32, every other value 8 (a pointer; a
 * small integer or a shared string costs no more), plus the decoded text (up to two bytes a
 * character). A 1 MB `[{},{},…]` is about 21 MB of heap; 1 MB of a typical webhook 2–3 MB.
 * An estimate that errs high, from one pass over the bytes (strings skipped). Text nested
 * deeper than MAX_JSON_DEPTH is refused before it is parsed: only its decoding is counted.
 */
export function jsonParseCost(raw: Buffer): number {
  let containers = 0;
  let keys = 0;
  let values = 0;
  let depth = 0;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (c === 0x22) {
      i = closingQuote(raw, i);
    } else if (c === 0x7b || c === 0x5b) {
      containers++;
      if (++depth > MAX_JSON_DEPTH) return 2 * raw.length;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    } else if (c === 0x3a) {
      keys++;
    } else if (c === 0x2c) {
      values++;
    }
  }
  return 2 * raw.length + 64 * containers + 32 * keys + 8 * values;
}

/**
 * The index of the quote that closes the string opened at `open` (the last index when it is
 * never closed). Strings are most of a typical body's bytes: they are skipped with the native
 * indexOf, not a byte loop. A quote closes the string when an even number of backslashes
 * precede it.
 */
function closingQuote(raw: Buffer, open: number): number {
  for (let from = open + 1; ; ) {
    const quote = raw.indexOf(0x22, from);
    if (quote === -1) return raw.length - 1;
    let backslashes = 0;
    for (let j = quote - 1; j > open && raw[j] === 0x5c; j--) backslashes++;
    if (backslashes % 2 === 0) return quote;
    from = quote + 1;
  }
}
