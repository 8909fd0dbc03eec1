/** Reading fields out of a parsed body that may be anything. */

export function field(body: unknown, ...path: string[]): unknown {
  let current = body;
  for (const name of path) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, name)) return undefined;
    current = (current as Record<string, unknown>)[name];
  }
  return current;
}

export function text(body: unknown, ...path: string[]): string | undefined {
  const value = field(body, ...path);
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** A string or a whole number, as a string (ids such as Telegram's `update_id`). */
export function idText(body: unknown, ...path: string[]): string | undefined {
  const value = field(body, ...path);
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  return typeof value === 'string' && value !== '' ? value : undefined;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** JSON carried inside a form field (GitHub's and Slack's `payload=`), or undefined. */
export function embeddedJson(value: unknown): unknown {
  if (typeof value !== 'string') return undefined;
  try {
    return JSON.parse(value);
  } catch {
    return undefined;
  }
}

/** The raw body as JSON for the schemes that verify body fields (Graph, Linear); undefined when it is not JSON. */
export function rawJson(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** When no kind can be read from a delivery. */
export const UNKNOWN_KIND = 'unknown';

export function joinKind(...parts: (string | undefined)[]): string {
  const present = parts.filter((part): part is string => part !== undefined && part !== '');
  return present.length > 0 ? present.join('.') : UNKNOWN_KIND;
}
