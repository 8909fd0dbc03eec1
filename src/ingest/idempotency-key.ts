import type { IncomingHttpHeaders } from 'node:http';
import { HttpError } from '../http/errors';
import { sha256Hex } from '../security';

/** Delivery ids that senders put on every retry of the same delivery. */
const DELIVERY_ID_HEADERS = [
  'webhook-id',
  'svix-id',
  'x-github-delivery',
  'x-shopify-webhook-id',
  'x-gitlab-event-uuid',
  'x-wc-webhook-delivery-id',
  'x-twilio-idempotency-token',
  'x-hook-delivery-id',
] as const;

const MAX_KEY_LENGTH = 255;

export interface IdempotencyKey {
  /** The key as published in `data.idempotencyKey`. */
  value: string;
  /** Explicit keys (header, delivery id, keyField) can be reused with another body: 409. */
  explicit: boolean;
}

/** Contract §5: header, then a provider delivery id, then keyField, else a fingerprint of (path, content type, raw body). */
export function resolveIdempotencyKey(
  headers: IncomingHttpHeaders,
  body: unknown,
  keyField: string | undefined,
  fingerprintParts: { path: string; contentType: string; bodyHash: string },
): IdempotencyKey {
  const header = headerValue(headers['idempotency-key']);
  if (header !== undefined) return explicit(header, 'Idempotency-Key');
  for (const name of DELIVERY_ID_HEADERS) {
    const id = headerValue(headers[name]);
    if (id !== undefined) return explicit(id, name);
  }
  if (keyField) {
    const found = valueAtPath(body, keyField);
    if (typeof found === 'string' || typeof found === 'number') return explicit(String(found), keyField);
  }
  // Over the body's hash, which the caller has anyway: the body is hashed once per request.
  const { path, contentType, bodyHash } = fingerprintParts;
  return { value: `fp:${sha256Hex(`${path}\n${contentType}\n${bodyHash}`)}`, explicit: false };
}

function explicit(value: string, from: string): IdempotencyKey {
  if (value.length > MAX_KEY_LENGTH) {
    throw new HttpError('BAD_REQUEST', `the idempotency key from ${from} is longer than ${MAX_KEY_LENGTH} characters`);
  }
  return { value, explicit: true };
}

function headerValue(value: string | string[] | undefined): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  const trimmed = first?.trim();
  return trimmed ? trimmed : undefined;
}

function valueAtPath(body: unknown, path: string): unknown {
  let current = body;
  for (const part of path.split('.')) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, part)) return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}
