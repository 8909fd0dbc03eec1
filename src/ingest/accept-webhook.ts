import type { IncomingHttpHeaders } from 'node:http';
import { HttpError } from '../http/errors';
import type { Classified, ProviderGate } from '../providers/gate';
import { topicName } from '../publish/topics';
import type { StoredTrigger } from '../registry/schemas';
import type { FileStore } from '../files/file-store';
import { recordOrClaimCheck, type RecordToPublish } from './claim-check';
import { cloudEvent } from './cloudevent';
import { bodyIdentity, identityContentType } from './body-identity';
import { applyInputFormat } from './coerce';
import { claimOrDegrade, completeOrRetry, releaseQuietly, type GuardedClaim, type OwnedClaim } from './guarded-store';
import { publishableHeaders, publishableQuery } from './headers';
import { resolveIdempotencyKey, triggerStoreKey, type IdempotencyKey } from './idempotency-key';
import { parseBody, type ParsedBody } from './parse-body';
import { publishFailureToHttp } from './publish-failure';
import type { EventTrace } from '../tracing/w3c';
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
  provider?: Pick<ProviderGate, 'classify'>;
  /** W3C trace context the event carries (CloudEvents distributed-tracing extension). */
  trace?: EventTrace;
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
  const parsed = await parseBody(raw, contentType, limits);
  applyInputFormat(parsed.input, trigger.inputFormat);
  const delivery = req.provider?.classify(req.headers, parsed.value);
  if (delivery?.ignored) return delivery;

  const bodyHash = await bodyIdentity(raw, contentType, limits);
  const query = publishableQuery(req.query);
  const key = resolveIdempotencyKey(req.headers, parsed.value, trigger.idempotency?.keyField, {
    method: req.method,
    path,
    query,
    contentType: identityContentType(contentType),
    bodyHash,
  }, delivery?.deliveryId);
  const storeKey = triggerStoreKey(trigger, path, key);
  const claim = await claimOrDegrade(deps, storeKey, bodyHash);
  if (claim !== 'unguarded' && claim.state !== 'claimed') return answerEarlierClaim(claim, key.explicit);
  return publishTriggerEvent(deps, { ...req, contentType, query, key, parsed, delivery }, { storeKey, claim, bodyHash });
}

/** A key already claimed: the first acknowledgement replayed, or 409 (in flight, or an explicit key reused with another body). */
export function answerEarlierClaim(claim: Exclude<GuardedClaim, OwnedClaim>, explicitKey: boolean): WebhookAck {
  if (explicitKey && !claim.sameBody) {
    throw new HttpError('key_reused', 'this idempotency key was used with a different body');
  }
  if (claim.state === 'in_flight') {
    throw new HttpError('in_flight', 'a request with this idempotency key is still being processed', {}, {
      'Retry-After': '1',
    });
  }
  return { ...claim.response, replayed: true };
}

export interface TriggerEventParts {
  path: string;
  trigger: StoredTrigger;
  method: string;
  headers: IncomingHttpHeaders;
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
  trace?: EventTrace;
}

export interface HeldKey {
  storeKey: string;
  claim: OwnedClaim | 'unguarded';
  bodyHash: string;
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
    headers: publishableHeaders(parts.headers, {
      authHeader: trigger.auth?.header,
      allow: trigger.publishHeaders,
      hidden: delivery?.hiddenHeaders,
    }),
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
    // Not acknowledged: the body's object goes (contract §12), the key is free for the retry.
    void toPublish?.uploads?.discard(error);
    if (claim !== 'unguarded') await releaseQuietly(deps, storeKey, claim);
    throw publishFailureToHttp(error);
  }
  deps.metrics.events.inc({ type: event.type });

  const ack = {
    status: trigger.response?.status ?? 200,
    body: trigger.response ? trigger.response.body : { message: 'Webhook processed', eventId: event.id },
    eventId: event.id,
  };
  if (claim !== 'unguarded') {
    const windowSeconds = key.explicit
      ? (trigger.idempotency?.ttlSeconds ?? DAY_SECONDS)
      : (trigger.idempotency?.fingerprintTtlSeconds ?? FINGERPRINT_WINDOW_SECONDS);
    await completeOrRetry(deps, storeKey, claim, bodyHash, ack, windowSeconds * 1000);
  }
  return { ...ack, replayed: false };
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
