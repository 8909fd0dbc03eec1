/**
 * JSON.parse that drops `__proto__` keys and `constructor.prototype` (as secure-json-parse
 * does), so no later merge by a consumer can change an object's prototype. The reviver
 * only runs when the text mentions one of those keys or has a `\u` escape (which can spell
 * one, e.g. `"\u005f_proto__"`).
 */
export function parseJsonSafely(text: string): unknown {
  if (!text.includes('__proto__') && !text.includes('prototype') && !text.includes('\\u')) return JSON.parse(text);
  return JSON.parse(text, function (key, value) {
    if (key === '__proto__') return undefined;
    if (key === 'constructor' && value && typeof value === 'object' && Object.hasOwn(value, 'prototype')) {
      return undefined;
    }
    return value;
  });
}

/** Field names that must never become keys set by assignment on a plain object. */
export function isForbiddenKey(name: string): boolean {
  return name === '__proto__' || name === 'constructor' || name === 'prototype';
}
