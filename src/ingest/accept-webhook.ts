import type { IncomingHttpHeaders } from 'node:http';
import { Refusal } from '../outcomes/refusal';
import { signatureFreshnessSeconds, type Classified, type ProviderGate } from '../providers/gate';
import { topicName } from '../publish/topics';
import type { StoredTrigger } from '../registry/schemas';
import type { FileStore } from '../files/file-store';
import type { RequestUploads } from '../files/request-uploads';
import { recordOrClaimCheck, type RecordToPublish } from './claim-check';
import { cloudEvent } from './cloudevent';
import { bodyIdentity, identityContentType } from './body-identity';
import { acknowledgementHash } from './ack-hash';
import { applyInputFormat } from './coerce';
import { checkInputSchema } from './input-schema';
import { completeOrRetry, releaseQuietly, type GuardedClaim, type OwnedClaim } from './guarded-store';
import { claimDelivery } from './delivery-claims';
import { publishableHeaders, publishableQuery } from './headers';
import { refuseUrlShape } from './file-values';
import { bodyStoreKey, fingerprintHeldByAnother, providerIdempotencyKey, resolveIdempotencyKey, triggerStoreKey, type IdempotencyKey } from './idempotency-key';
import { parseBody, type ParsedBody } from './parse-body';
import { publishRefusal } from './publish-failure';
import { dropUnacknowledgedObjects } from './unacknowledged-objects';
import type { EventTrace } from '../http/context';
import type { IngestDeps } from './ports';

const DAY_SECONDS = 86_400;
const FINGERPRINT_WINDOW_SECONDS = 300;

export interface WebhookRequest {
  path: string;
  trigger: StoredTrigger;
  method: string;
  headers: IncomingHttpHeaders;
  query: Record<string, unknown>;
  raw: Buffer;
  /** A trigger with `provider` (contract §10): already verified; reads the kind, filter and delivery id. */
  provider?: Pick<ProviderGate, 'checkBodyType' | 'classify'> & Partial<Pick<ProviderGate, 'parseType'>>;
  /** W3C trace context the event carries (CloudEvents distributed-tracing extension). */
  trace?: EventTrace;
  /** Told the key as soon as it is known, so the delivery log shows it on a 409 or 503 too (contract §13). */
  note?: (facts: DeliveryFacts) => void;
}

/** For the delivery log (contract §13): the key a delivery is claimed under, and a provider's id and kind. */
export interface DeliveryFacts {
  idempotencyKey?: string;
  bytes?: number;
  deliveryId?: string;
  kind?: string;
}

export interface WebhookAck {
  status: number;
  body: unknown;
  eventId: string;
  replayed: boolean;
}

/** A provider delivery whose kind the trigger's `events` filter out: answered 200, nothing published. */
export interface IgnoredDelivery {
  ignored: true;
  kind: string;
}

/** Contract §2 steps 4–8 for a request that is already authenticated and within its limits. */
export async function acceptWebhook(deps: IngestDeps & { files?: FileStore }, req: WebhookRequest): Promise<WebhookAck | IgnoredDelivery> {
  const { config } = deps;
  const { path, trigger, raw } = req;
  const contentType = req.headers['content-type'];
  const limits = {
    maxFileBytes: config.MAX_FILE_BYTES,
    maxFiles: config.MAX_FILES,
    maxFields: config.MAX_FIELDS,
    maxFieldBytes: config.MAX_BODY_BYTES,
  };
  req.provider?.checkBodyType(raw, contentType);
  const parsed = await parseBody(raw, req.provider?.parseType?.(contentType) ?? contentType, limits);
  applyInputFormat(parsed.input, trigger.inputFormat, config.MAX_FILE_BYTES);
  const delivery = req.provider?.classify(req.headers, parsed.value);
  if (delivery?.ignored) return delivery;
  // The cheap synchronous refusals first: the schema check may wait for a worker.
  const query = publishableQuery(req.query);
  refuseUrlShape('query', query);
  const headers = eventHeaders(req.headers, trigger, delivery);
  refuseUrlShape('headers', headers);
  if (trigger.schema !== undefined) await checkInputSchema(parsed.input, trigger.schema, trigger.workspaceId);

  const bodyHash = bodyIdentity(raw, parsed);
  const keyField = trigger.idempotency?.keyField;
  const fingerprint = { method: req.method, path, query, contentType: identityContentType(contentType), bodyHash };
  const key = delivery
    ? providerIdempotencyKey(delivery.deliveryId, parsed.value, keyField, fingerprint)
    : resolveIdempotencyKey(req.headers, parsed.value, keyField, fingerprint);
  req.note?.(logFacts(key, delivery));
  const storeKey = triggerStoreKey(trigger, path, key);
  // A value the family claims once (Mailgun's token) takes the body claim's place: any body under a seen token is a replay.
  const bodyKey = delivery?.claimOnce
    ? bodyStoreKey(trigger, path, `${delivery.published.name}:once`, delivery.claimOnce)
    : delivery?.claimsBody
      ? bodyStoreKey(trigger, path, delivery.published.kind, bodyHash)
      : undefined;
  const claims = await claimDelivery(deps, storeKey, bodyKey, bodyHash);
  const parts = { ...req, headers, contentType, query, key, parsed, delivery };
  if ('earlier' in claims) {
    const { earlier } = claims;
    if (claims.of === 'body') return answerEarlierClaim(earlier, false, trigger);
    if (fingerprintHeldByAnother(key, earlier)) {
      deps.logger.warn({ path }, 'a fingerprint key is held by a sender key of the previous layout: published without it');
      return publishTriggerEvent(deps, parts, { storeKey, claim: 'unguarded', bodyHash });
    }
    if (key.fromProvider && earlier.state === 'completed' && !earlier.sameBody) {
      // The provider's own redelivery (Stripe updates pending_webhooks): a 409 would be retried for days.
      deps.metrics.providerRedeliveries.inc({ provider: delivery?.published.name ?? 'unknown' });
    }
    return answerEarlierClaim(earlier, key.explicit && !key.fromProvider, trigger);
  }
  const held: HeldKey = { storeKey, claim: claims.claim, bodyHash, ...(claims.body && { body: claims.body }) };
  return publishTriggerEvent(deps, parts, held);
}

/** What the sender is answered with: the trigger's `response.body`, else the default (contract §2). */
function acknowledgementBody(trigger: StoredTrigger, eventId: string): unknown {
  return trigger.response ? trigger.response.body : { message: 'Webhook processed', eventId };
}

/**
 * A key already claimed: the first acknowledgement replayed, rebuilt from the trigger (the
 * store keeps only its status and event id), or 409 (in flight, or an explicit key reused
 * with another body).
 */
export function answerEarlierClaim(claim: Exclude<GuardedClaim, OwnedClaim>, explicitKey: boolean, trigger: StoredTrigger): WebhookAck {
  if (explicitKey && !claim.sameBody) {
    throw new Refusal('key_reused', 'this idempotency key was used with a different body');
  }
  if (claim.state === 'in_flight') {
    throw new Refusal('in_flight', 'a request with this idempotency key is still being processed', {});
  }
  const { status, eventId } = claim.response;
  return { status, body: acknowledgementBody(trigger, eventId), eventId, replayed: true };
}

export interface TriggerEventParts {
  path: string;
  trigger: StoredTrigger;
  method: string;
  /** As published (credentials and signatures removed: eventHeaders). */
  headers: Record<string, string>;
  contentType: string | undefined;
  /** As published (credentials removed). */
  query: Record<string, unknown>;
  key: IdempotencyKey;
  parsed: ParsedBody;
  delivery?: Extract<Classified, { ignored: false }>;
  /** Chosen before the body was read when the event's files are stored under it (contract §12). */
  eventId?: string;
  /** The raw body, stored by reference when the event would be over MAX_RECORD_BYTES (contract §12). */
  raw?: Buffer;
  /** The objects the event's files were stored as: dropped here when it is not acknowledged. */
  uploads?: RequestUploads;
  trace?: EventTrace;
}

export interface HeldKey {
  storeKey: string;
  claim: OwnedClaim | 'unguarded';
  bodyHash: string;
  /** A provider delivery's body, claimed beside its id (contract §5): completed or released with it. */
  body?: { storeKey: string; claim: OwnedClaim | 'unguarded' };
}

/** Publishes the trigger event under a claimed key, then records the acknowledgement (contract §2 step 8). */
export async function publishTriggerEvent(deps: IngestDeps & { files?: FileStore }, parts: TriggerEventParts, held: HeldKey): Promise<WebhookAck> {
  const { config } = deps;
  const { path, trigger, parsed, delivery, query, contentType, key } = parts;
  const { storeKey, claim, bodyHash } = held;
  const event = cloudEvent('webhook.trigger', `/api/webhooks/trigger/${path}`, trigger.workflowId, {
    workflowId: trigger.workflowId,
    workspaceId: trigger.workspaceId,
    triggerPath: path,
    idempotencyKey: key.value,
    input: parsed.input,
    common: commonFields(parsed.value),
    method: parts.method,
    contentType: contentType ?? null,
    headers: parts.headers,
    query,
    ...(delivery && { provider: delivery.published }),
  }, parts.trace);
  if (parts.eventId) event.id = parts.eventId;
  const largeBody = parts.raw && { raw: parts.raw, contentType, workspaceId: trigger.workspaceId, path };
  let toPublish: RecordToPublish | undefined;
  try {
    toPublish = await recordOrClaimCheck(deps.files, config.MAX_RECORD_BYTES, topicName(config, 'triggers'), trigger.workflowId, event, largeBody);
    await deps.publisher.publish([toPublish.record], config.PUBLISH_TIMEOUT_MS);
  } catch (error) {
    // Not acknowledged: the event's objects go (contract §12) unless the sink may hold it; the key is free for the retry.
    dropUnacknowledgedObjects(deps.metrics, toPublish?.uploads ?? parts.uploads, error);
    if (claim !== 'unguarded') await releaseQuietly(deps, storeKey, claim);
    if (held.body && held.body.claim !== 'unguarded') await releaseQuietly(deps, held.body.storeKey, held.body.claim);
    throw publishRefusal(error);
  }
  deps.metrics.events.inc({ type: event.type });

  const body = acknowledgementBody(trigger, event.id);
  const ack = { status: trigger.response?.status ?? 200, body, eventId: event.id };
  // Kept per key: status, event id and a hash, never the body (a trigger's response may be 1 MB).
  const completed = { status: ack.status, eventId: event.id, ackHash: acknowledgementHash(trigger) };
  const windowMs = idempotencyWindowSeconds(trigger, key.explicit) * 1000;
  const writes: Promise<void>[] = [];
  if (claim !== 'unguarded') writes.push(completeOrRetry(deps, storeKey, claim, bodyHash, completed, windowMs));
  if (held.body && held.body.claim !== 'unguarded') {
    writes.push(completeOrRetry(deps, held.body.storeKey, held.body.claim, bodyHash, completed, windowMs));
  }
  await Promise.all(writes);
  return { ...ack, replayed: false };
}

/** The request's headers as the event carries them (contract §4): credentials and signatures withheld. */
export function eventHeaders(headers: IncomingHttpHeaders, trigger: StoredTrigger, delivery?: TriggerEventParts['delivery']): Record<string, string> {
  return publishableHeaders(headers, {
    authHeader: trigger.auth?.header?.toLowerCase(),
    allow: trigger.publishHeaders,
    hidden: delivery?.hiddenHeaders,
  });
}

function logFacts(key: IdempotencyKey, delivery: TriggerEventParts['delivery']): DeliveryFacts {
  return { idempotencyKey: key.value, ...(delivery && { deliveryId: delivery.deliveryId, kind: delivery.published.kind }) };
}

/**
 * How long a key is remembered (contract §5): explicit keys 24 h, fingerprints 5 min, unless
 * the trigger says otherwise; never less than a signed timestamp stays within its tolerance.
 */
function idempotencyWindowSeconds(trigger: StoredTrigger, explicit: boolean): number {
  const window = explicit
    ? (trigger.idempotency?.ttlSeconds ?? DAY_SECONDS)
    : (trigger.idempotency?.fingerprintTtlSeconds ?? FINGERPRINT_WINDOW_SECONDS);
  return Math.max(window, signatureFreshnessSeconds(trigger.provider));
}

/** Only the keys among event, id, data that the body has. */
function commonFields(body: unknown): Record<string, unknown> {
  const common: Record<string, unknown> = {};
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return common;
  for (const name of ['event', 'id', 'data'] as const) {
    if (Object.hasOwn(body, name)) common[name] = (body as Record<string, unknown>)[name];
  }
  return common;
}
