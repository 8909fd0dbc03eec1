import { mapWhatsAppPayload, WhatsAppPayloadError, type ChatEventDraft } from '../channels/whatsapp/map';
import { verifyWhatsAppSignature } from '../channels/whatsapp/signature';
import { HttpError } from '../http/errors';
import { topicName } from '../publish/topics';
import type { StoredChannel } from '../registry/schemas';
import { cloudEvent, toRecord, type CloudEvent } from './cloudevent';
import { claimOrDegrade, settleQuietly } from './guarded-store';
import { publishFailureToHttp, RETRY_AFTER_SECONDS } from './publish-failure';
import type { IngestDeps } from './ports';
import { parseJsonBytes } from './parse-body';

/** Meta retries a delivery for up to 7 days (contract §3). */
export const WHATSAPP_DEDUPE_WINDOW_MS = 7 * 86_400 * 1000;
/** A message id names one event for good: there is no "same key, other body" to detect. */
const NO_BODY_HASH = '';
/** A 3 MB body of broken messages must not become a 3 MB error body. */
const MAX_ISSUES = 20;

export interface WhatsAppDelivery {
  channelId: string;
  channel: StoredChannel;
  /** The body exactly as received: the signature covers these bytes. */
  raw: Buffer;
  /** `X-Hub-Signature-256`. */
  signature: string | undefined;
  /** Only to correlate the foreign-change log line with the access log. */
  requestId?: string;
}

export interface WhatsAppAck {
  /** Events of the POST addressed to this channel. */
  received: number;
  /** Events acknowledged by the sink in this call. */
  published: number;
  /** Events already published by an earlier delivery (or repeated within this one). */
  duplicates: number;
  /** Changes for another phone_number_id: counted and logged, never published. */
  foreign: number;
}

interface Pending {
  draft: ChatEventDraft;
  storeKey: string;
  /** false when the idempotency store failed and IDEMPOTENCY_ON_STORE_ERROR=accept. */
  guarded: boolean;
}

/**
 * Contract §3 POST for a known channel: signature on the raw bytes → parse → map → dedupe
 * per event → one publish for every new event → complete. Throws HttpError 400/401/503.
 */
export async function acceptWhatsApp(deps: IngestDeps, delivery: WhatsAppDelivery): Promise<WhatsAppAck> {
  const { config } = deps;
  const { channelId, channel, raw } = delivery;
  if (!verifyWhatsAppSignature(raw, delivery.signature, channel.appSecret)) {
    throw new HttpError('UNAUTHORIZED', 'missing or invalid X-Hub-Signature-256');
  }

  const { events, foreignChanges } = mapPayload(parseJsonBytes(raw), channelId, channel);
  if (foreignChanges > 0) {
    deps.metrics.foreignChanges.inc(foreignChanges);
    deps.logger.warn(
      { reqId: delivery.requestId, channelId, foreignChanges },
      'whatsapp changes for another phone_number_id were not published',
    );
  }

  // The same message can appear twice in one POST; only its first occurrence is claimed,
  // otherwise the second claim would find the first one in flight.
  const unique = new Map<string, ChatEventDraft>();
  for (const draft of events) if (!unique.has(draft.dedupeKey)) unique.set(draft.dedupeKey, draft);
  let duplicates = events.length - unique.size;

  const settled = await Promise.allSettled(
    [...unique.values()].map(async (draft) => {
      const storeKey = `wa:${channelId}:${draft.dedupeKey}`;
      return { draft, storeKey, claim: await claimOrDegrade(deps, storeKey, NO_BODY_HASH) };
    }),
  );
  const pending: Pending[] = [];
  let inFlight = 0;
  let claimFailure: unknown;
  for (const result of settled) {
    if (result.status === 'rejected') {
      claimFailure ??= result.reason;
      continue;
    }
    const { draft, storeKey, claim } = result.value;
    if (claim === 'unguarded' || claim.state === 'claimed') {
      pending.push({ draft, storeKey, guarded: claim !== 'unguarded' });
    } else if (claim.state === 'completed') {
      duplicates += 1;
    } else {
      inFlight += 1;
    }
  }
  if (claimFailure !== undefined) {
    // IDEMPOTENCY_ON_STORE_ERROR=refuse: nothing is published, so every claim is given back.
    await releaseAll(deps, pending);
    throw claimFailure;
  }

  const published = pending.map(({ draft }) => ({
    draft,
    event: cloudEvent(draft.type, `/api/channels/whatsapp/${channelId}`, draft.subject, draft.data),
  }));
  if (published.length > 0) {
    const topic = topicName(config, 'chat');
    try {
      const records = published.map(({ draft, event }) => toRecord(topic, `${channelId}:${draft.subject}`, event));
      await deps.publisher.publish(records, config.PUBLISH_TIMEOUT_MS);
    } catch (error) {
      await releaseAll(deps, pending);
      throw publishFailureToHttp(error);
    }
    for (const { event } of published) deps.metrics.events.inc({ type: event.type });
    await Promise.all(published.map(({ event }, i) => completeClaim(deps, pending[i], event)));
  }

  if (inFlight > 0) {
    // Another request holds the claim of some event and has not been acknowledged yet. It
    // may be the very attempt Meta already gave up on (a timeout is why Meta retries), so
    // a 200 here could lose the event if that attempt then fails. 503 makes Meta retry;
    // by then the event is completed (dropped as a duplicate) or released (published).
    // The events this request did claim are published above, so every retry makes progress.
    throw new HttpError(
      'SERVICE_UNAVAILABLE',
      'some events of this delivery are still being processed by another request; send it again',
      { reason: 'in_flight', inFlight },
      { 'Retry-After': RETRY_AFTER_SECONDS },
    );
  }
  return { received: events.length, published: published.length, duplicates, foreign: foreignChanges };
}

function mapPayload(payload: unknown, channelId: string, channel: StoredChannel) {
  try {
    return mapWhatsAppPayload(payload, {
      channelId,
      workspaceId: channel.workspaceId,
      inboxId: channel.inboxId,
      phoneNumberId: channel.phoneNumberId,
    });
  } catch (error) {
    if (!(error instanceof WhatsAppPayloadError)) throw error;
    const issues = Array.isArray(error.details) ? error.details.slice(0, MAX_ISSUES) : error.details;
    throw new HttpError('BAD_REQUEST', 'not a WhatsApp Cloud API webhook body', { issues });
  }
}

async function completeClaim(deps: IngestDeps, pending: Pending, event: CloudEvent<unknown>): Promise<void> {
  if (!pending.guarded) return;
  const response = { status: 200, body: null, eventId: event.id };
  await settleQuietly(deps, 'complete', () =>
    deps.idempotency.complete(pending.storeKey, NO_BODY_HASH, response, WHATSAPP_DEDUPE_WINDOW_MS),
  );
}

async function releaseAll(deps: IngestDeps, pending: Pending[]): Promise<void> {
  await Promise.all(
    pending
      .filter((p) => p.guarded)
      .map((p) => settleQuietly(deps, 'release', () => deps.idempotency.release(p.storeKey))),
  );
}
