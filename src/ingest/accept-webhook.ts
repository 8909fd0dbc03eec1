import type { IncomingHttpHeaders } from 'node:http';
import { HttpError } from '../http/errors';
import type { Classified, ProviderGate } from '../providers/gate';
import { topicName } from '../publish/topics';
import type { StoredTrigger } from '../registry/schemas';
import { sha256Hex } from '../security';
import { cloudEvent, toRecord } from './cloudevent';
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
export async function acceptWebhook(deps: IngestDeps, req: WebhookRequest): Promise<WebhookAck | IgnoredDelivery> {
  const { config } = deps;
  const { path, trigger, raw } = req;
  const contentType = req.headers['content-type'];
  const parsed = await parseBody(raw, contentType, {
    maxFileBytes: config.MAX_FILE_BYTES,
    maxFiles: config.MAX_FILES,
    maxFields: config.MAX_FIELDS,
    maxFieldBytes: config.MAX_BODY_BYTES,
  });
  applyInputFormat(parsed.input, trigger.inputFormat, config.MAX_FILE_BYTES);
  const delivery = req.provider?.classify(req.headers, parsed.value);
  if (delivery?.ignored) return delivery;

  const bodyHash = sha256Hex(raw);
  const query = publishableQuery(req.query);
  const key = resolveIdempotencyKey(req.headers, parsed.value, trigger.idempotency?.keyField, {
    method: req.method,
    path,
    query,
    contentType: contentType ?? '',
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
  trace?: EventTrace;
}

export interface HeldKey {
  storeKey: string;
  claim: OwnedClaim | 'unguarded';
  bodyHash: string;
}

/** Publishes the trigger event under a claimed key, then records the acknowledgement (contract §2 step 8). */
export async function publishTriggerEvent(deps: IngestDeps, parts: TriggerEventParts, held: HeldKey): Promise<WebhookAck> {
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
  try {
    const record = toRecord(topicName(config, 'triggers'), trigger.workflowId, event);
    await deps.publisher.publish([record], config.PUBLISH_TIMEOUT_MS);
  } catch (error) {
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
