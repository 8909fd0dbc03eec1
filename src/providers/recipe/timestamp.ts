import type { Recipe } from './schema';

const DIGITS = /^\d{1,16}$/;
/** RFC 3339 (and the ISO 8601 Zendesk sends): date, time, optional fraction (Twitch sends nanoseconds), Z or an offset. */
const RFC3339 = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/i;

/** The signed timestamp as Unix seconds, in the recipe's unit; undefined when malformed. */
export function timestampSeconds(text: string, unit: NonNullable<Recipe['timestamp']>['unit']): number | undefined {
  if (unit === 's') return DIGITS.test(text) ? Number(text) : undefined;
  if (unit === 'ms') return DIGITS.test(text) ? Number(text) / 1000 : undefined;
  const match = RFC3339.exec(text);
  if (!match) return undefined;
  const fraction = match[2] ? `.${match[2].slice(0, 3)}` : '';
  const ms = Date.parse(`${match[1]}${fraction}${match[3].toUpperCase()}`);
  return Number.isNaN(ms) ? undefined : ms / 1000;
}
