import type { IncomingHttpHeaders } from 'node:http';
import { Refusal } from '../outcomes/refusal';
import { sha256Hex } from '../security';

const MAX_KEY_LENGTH = 255;

export interface IdempotencyKey {
  /** The key as published in `data.idempotencyKey`. */
  value: string;
  /** Explicit keys (header, keyField, a provider's delivery id) can be reused with another body: 409 (a provider's: a replay). */
  explicit: boolean;
  /** A verified provider's own delivery id: seen again with other bytes it is a redelivery (a replay), never 409. */
  fromProvider?: true;
  /**
   * Named by the request itself (`Idempotency-Key`, a keyField value): stored in a namespace of
   * its own, so it can never be a fingerprint or a provider's delivery id (contract §13.1).
   */
  fromSender?: true;
}

/** What a fingerprint is taken over: everything of the request that the event carries. */
export interface FingerprintParts {
  method: string;
  path: string;
  /** The query as published (credentials already removed). */
  query: Record<string, unknown>;
  contentType: string;
  bodyHash: string;
}

/**
 * Contract §5 for a trigger without a provider: `Idempotency-Key`, then keyField, else a
 * fingerprint of (method, path, query, content type, body identity): two requests that differ
 * in any of them publish different events, so neither may be dropped as the other's replay.
 * A provider's delivery-id header (`webhook-id`, `X-GitHub-Delivery`, …) is unsigned here and
 * not read: a trigger that names its `provider` reads the verified one.
 */
export function resolveIdempotencyKey(
  headers: IncomingHttpHeaders,
  body: unknown,
  keyField: string | undefined,
  fingerprintParts: FingerprintParts,
): IdempotencyKey {
  const header = headerValue(headers['idempotency-key']);
  if (header !== undefined) return sendersKey(header, 'Idempotency-Key');
  if (keyField) {
    const found = valueAtPath(body, keyField);
    if (typeof found === 'string' || typeof found === 'number') return sendersKey(String(found), keyField);
  }
  // Over the body's hash, which the caller has anyway: the body is hashed once per request.
  const { method, path, query, contentType, bodyHash } = fingerprintParts;
  const fingerprint = sha256Hex(`${method}\n${path}\n${canonicalQuery(query)}\n${contentType}\n${bodyHash}`);
  return { value: `fp:${fingerprint}`, explicit: false };
}

/**
 * Contract §5 for a verified provider delivery: the provider's delivery id, else keyField
 * (read from the verified body), else the fingerprint. Never an `Idempotency-Key` or a
 * delivery-id header the provider does not read: those are unsigned, a replay could change them.
 */
export function providerIdempotencyKey(
  providerDeliveryId: string | undefined,
  body: unknown,
  keyField: string | undefined,
  fingerprintParts: FingerprintParts,
): IdempotencyKey {
  if (providerDeliveryId) return { ...explicit(providerDeliveryId, 'the provider delivery id'), fromProvider: true };
  return resolveIdempotencyKey({}, body, keyField, fingerprintParts);
}

/**
 * The explicit key a request carries in its headers (`Idempotency-Key`), if any: known before
 * the body is read, so it can be claimed before the body's files are stored (contract §12).
 */
export function headerIdempotencyKey(headers: IncomingHttpHeaders): IdempotencyKey | undefined {
  const header = headerValue(headers['idempotency-key']);
  return header === undefined ? undefined : sendersKey(header, 'Idempotency-Key');
}

/**
 * The idempotency store's key for a trigger: scoped by workspace, workflow and path, so a
 * path deleted and reused by another workflow or workspace starts with no acknowledgements.
 * The ids are percent-encoded: an id containing `:` cannot pose as another scope.
 * A key the request names (`fromSender`) lives under `s:`, the keys the gateway derives
 * (fingerprints, a provider's delivery id) under `t:`, as before: a sender's `Idempotency-Key:
 * fp:<hex>` cannot pre-claim another request's fingerprint (contract §13.1).
 */
export function triggerStoreKey(trigger: { workspaceId: string; workflowId: string }, path: string, key: IdempotencyKey): string {
  const scope = key.fromSender ? 's' : 't';
  return `${scope}:${encodeURIComponent(trigger.workspaceId)}:${encodeURIComponent(trigger.workflowId)}:${path}:${key.value}`;
}

/**
 * Whether an earlier record under a fingerprint key is some other request's. A fingerprint
 * covers the body's hash, so its own record always holds that body; one holding another body
 * was written by a sender's `Idempotency-Key: fp:<hex>` before sender keys moved to `s:` (a
 * key claimed before the upgrade, or by a pod of the previous release during it). The request
 * is then published without the key (docs/choices.md), never answered from that record.
 */
export function fingerprintHeldByAnother(key: IdempotencyKey, earlier: { sameBody: boolean }): boolean {
  return !key.explicit && !earlier.sameBody;
}

/**
 * The store key under which a provider delivery's body is claimed with its event kind
 * (contract §5): a scope of its own (`b:`), so no delivery id can pose as it.
 */
export function bodyStoreKey(trigger: { workspaceId: string; workflowId: string }, path: string, kind: string, bodyHash: string): string {
  return `b:${encodeURIComponent(trigger.workspaceId)}:${encodeURIComponent(trigger.workflowId)}:${path}:${encodeURIComponent(kind)}:${bodyHash}`;
}

/** Parameter order does not matter; the order of a repeated parameter's values does. */
function canonicalQuery(query: Record<string, unknown>): string {
  return JSON.stringify(
    Object.keys(query)
      .sort()
      .map((name) => [name, query[name]]),
  );
}

function sendersKey(value: string, from: string): IdempotencyKey {
  return { ...explicit(value, from), fromSender: true };
}

function explicit(value: string, from: string): IdempotencyKey {
  if (value.length > MAX_KEY_LENGTH) {
    throw new Refusal('key_too_long', `the idempotency key from ${from} is longer than ${MAX_KEY_LENGTH} characters`);
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
