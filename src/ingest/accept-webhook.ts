import type { IncomingHttpHeaders } from 'node:http';
import { HttpError } from '../http/errors';
import { topicName } from '../publish/topics';
import type { StoredTrigger } from '../registry/schemas';
import { sha256Hex } from '../security';
import { cloudEvent, toRecord } from './cloudevent';
import { applyInputFormat } from './coerce';
import { claimOrDegrade, settleQuietly } from './guarded-store';
import { publishableHeaders, publishableQuery } from './headers';
import { resolveIdempotencyKey } from './idempotency-key';
import { parseBody } from './parse-body';
import { publishFailureToHttp } from './publish-failure';
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
}

export interface WebhookAck {
  status: number;
  body: unknown;
  eventId: string;
  replayed: boolean;
}

/** Contract §2 steps 4–8 for a request that is already authenticated and within its limits. */
export async function acceptWebhook(deps: IngestDeps, req: WebhookRequest): Promise<WebhookAck> {
  const { config } = deps;
  const { path, trigger, raw } = req;
  const contentType = req.headers['content-type'];
  const parsed = await parseBody(raw, contentType, {
    maxFileBytes: config.MAX_FILE_BYTES,
    maxFiles: config.MAX_FILES,
    maxFields: config.MAX_FIELDS,
    maxFieldBytes: config.MAX_BODY_BYTES,
  });
  applyInputFormat(parsed.input, trigger.inputFormat);

  const bodyHash = sha256Hex(raw);
  const key = resolveIdempotencyKey(req.headers, parsed.value, trigger.idempotency?.keyField, {
    path,
    contentType: contentType ?? '',
    bodyHash,
  });
  const storeKey = `t:${path}:${key.value}`;
  const claim = await claimOrDegrade(deps, storeKey, bodyHash);
  if (claim !== 'unguarded' && claim.state !== 'claimed') {
    if (key.explicit && !claim.sameBody) {
      throw new HttpError('CONFLICT', 'this idempotency key was used with a different body', { reason: 'key_reused' });
    }
    if (claim.state === 'in_flight') {
      throw new HttpError('CONFLICT', 'a request with this idempotency key is still being processed', {
        reason: 'in_flight',
      }, { 'Retry-After': '1' });
    }
    return { ...claim.response, replayed: true };
  }

  const event = cloudEvent('webhook.trigger', `/api/webhooks/trigger/${path}`, trigger.workflowId, {
    workflowId: trigger.workflowId,
    workspaceId: trigger.workspaceId,
    triggerPath: path,
    idempotencyKey: key.value,
    input: parsed.input,
    common: commonFields(parsed.value),
    method: req.method,
    contentType: contentType ?? null,
    headers: publishableHeaders(req.headers, trigger.auth?.header),
    query: publishableQuery(req.query),
  });
  try {
    const record = toRecord(topicName(config, 'triggers'), trigger.workflowId, event);
    await deps.publisher.publish([record], config.PUBLISH_TIMEOUT_MS);
  } catch (error) {
    if (claim !== 'unguarded') await settleQuietly(deps, 'release', () => deps.idempotency.release(storeKey));
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
    await settleQuietly(deps, 'complete', () => deps.idempotency.complete(storeKey, bodyHash, ack, windowSeconds * 1000));
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
