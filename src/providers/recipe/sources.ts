import { sha256Hex } from '../../security';
import type { IncomingHttpHeaders } from 'node:http';
import { UNKNOWN_KIND } from '../body';
import { header } from '../schemes/signing';
import type { Recipe } from './schema';

type IdSource = Extract<NonNullable<Recipe['deliveryId']>, unknown[]>[number];
type KindSource = Extract<NonNullable<Recipe['kind']>, unknown[]>[number];

const MAX_ITEMS = 1000;
/** When the items of an array body disagree on their kind (SendGrid, HubSpot batches). */
export const MIXED_KIND = 'mixed';

/** RFC 6901 over a parsed body: a string, or a whole number as a string; else undefined. */
export function atPointer(body: unknown, pointer: string): string | undefined {
  let current = body;
  for (const raw of pointer.slice(1).split('/')) {
    const name = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (current === null || typeof current !== 'object') return undefined;
    if (Array.isArray(current)) {
      if (!/^(?:0|[1-9]\d{0,5})$/.test(name)) return undefined;
      current = current[Number(name)];
    } else {
      if (!Object.hasOwn(current, name)) return undefined;
      current = (current as Record<string, unknown>)[name];
    }
  }
  if (typeof current === 'number' && Number.isSafeInteger(current)) return String(current);
  return typeof current === 'string' && current !== '' ? current : undefined;
}

/** Each item's value of an array body (a lone object counts as one item); undefined when any lacks it. */
function eachValue(body: unknown, pointer: string): string[] | undefined {
  const items = Array.isArray(body) ? body.slice(0, MAX_ITEMS) : [body];
  const values = items.map((item) => atPointer(item, pointer));
  return values.length > 0 && values.every((value) => value !== undefined) ? (values as string[]) : undefined;
}

const list = <T>(value: T | T[] | undefined): T[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

export interface Delivery {
  headers: IncomingHttpHeaders;
  body: unknown;
  raw?: Buffer;
}

function idFrom(source: IdSource, delivery: Delivery): string | undefined {
  if ('header' in source) return header(delivery.headers, source.header);
  if ('body' in source) return atPointer(delivery.body, source.body);
  if ('bodyDigest' in source) return delivery.raw ? source.bodyDigest.prefix + sha256Hex(delivery.raw) : undefined;
  const values = eachValue(delivery.body, source.each);
  if (!values) return undefined;
  // One id per delivery (§5): a batch's ids together, hashed when there are several.
  return values.length === 1 ? values[0] : `sha256:${sha256Hex(values.join('\n'))}`;
}

/** The first source that yields an id. */
export function deliveryIdOf(recipe: Recipe, delivery: Delivery): string | undefined {
  for (const source of list(recipe.deliveryId)) {
    const id = idFrom(source, delivery);
    if (id !== undefined) return id;
  }
  return undefined;
}

function kindFrom(source: KindSource, delivery: Delivery): string | undefined {
  if ('constant' in source) return source.constant;
  if ('join' in source) {
    const parts = source.join.map((part) => kindFrom(part, delivery));
    return parts.every((part) => part !== undefined) ? parts.join(source.separator) : undefined;
  }
  if ('each' in source) {
    const values = eachValue(delivery.body, source.each);
    if (!values) return undefined;
    return values.every((value) => value === values[0]) ? values[0] : MIXED_KIND;
  }
  if ('body' in source) return atPointer(delivery.body, source.body);
  const value = header(delivery.headers, source.header);
  if ('values' in source) return value !== undefined && source.values.includes(value) ? value : undefined;
  return value;
}

/** The first source that yields a kind, else `unknown`. */
export function kindOf(recipe: Recipe, delivery: Delivery): string {
  for (const source of list(recipe.kind)) {
    const kind = kindFrom(source, delivery);
    if (kind !== undefined) return kind;
  }
  return UNKNOWN_KIND;
}

/** Whether every delivery id source is covered by the signature: the signed body, or the signed `{id}` header. */
export function deliveryIdSigned(recipe: Recipe): boolean {
  const sources = list(recipe.deliveryId);
  return sources.length > 0 && sources.every((source) => !('header' in source) || source.header === recipe.id?.header);
}
