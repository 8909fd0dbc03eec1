/**
 * JSON.parse that drops `__proto__` keys and `constructor.prototype` (as secure-json-parse
 * does), so no later merge by a consumer can change an object's prototype. The reviver
 * only runs when the text mentions one of those keys or has a `\u` escape (which can spell
 * one, e.g. `"\u005f_proto__"`).
 */
export function parseJsonSafely(text: string): unknown {
  assertDepth(text);
  if (!text.includes('__proto__') && !text.includes('prototype') && !text.includes('\\u')) return JSON.parse(text);
  return JSON.parse(text, function (key, value) {
    if (key === '__proto__') return undefined;
    if (key === 'constructor' && value && typeof value === 'object' && Object.hasOwn(value, 'prototype')) {
      return undefined;
    }
    return value;
  });
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
