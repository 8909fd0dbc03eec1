import { ChatPayloadError, type ChatEventDraft, type ChatMapping, type ChatProvider } from '../providers/chat-event';
import { Refusal } from '../outcomes/refusal';
import type { Reason } from '../outcomes/reasons';
import { topicName } from '../publish/topics';
import { cloudEvent, toRecord, type CloudEvent } from './cloudevent';
import { claimOrDegrade, completeOrRetry, releaseQuietly, type OwnedClaim } from './guarded-store';
import { publishRefusal } from './publish-failure';
import type { IngestDeps } from './ports';
import type { EventTrace } from '../http/context';

/**
 * Every chat event is deduplicated for 7 days: Meta retries a delivery for up to 7 days,
 * Telegram picks a random update_id after a week of silence, Twilio retries within minutes.
 */
export const CHAT_DEDUPE_WINDOW_MS = 7 * 86_400 * 1000;
/** An event id names one event for good: there is no "same key, other body" to detect. */
const NO_BODY_HASH = '';
/** How many skipped items one log line names, and schema issues one 400 body lists. */
const MAX_LOGGED_ITEMS = 20;

export interface ChatDelivery {
  provider: ChatProvider;
  channelId: string;
  /**
   * Who the channel is registered for: its workspace and the number, account or bot it receives
   * for. Dedupe keys live under it (contract §5), so a channel id registered again for another
   * bot or number does not inherit the old one's event ids.
   */
  scope: { keyPrefix: string; workspaceId: string; identity?: string };
  /** The verified delivery, mapped by the channel's pure mapper. */
  mapping: ChatMapping;
  /** Only to correlate log lines with the access log. */
  requestId?: string;
  /** W3C trace context every event of the delivery carries. */
  trace?: EventTrace;
}

export interface ChatAck {
  /** Events of the delivery addressed to this channel. */
  received: number;
  /** Events acknowledged by the sink in this call. */
  published: number;
  /** Events already published by an earlier delivery (or repeated within this one). */
  duplicates: number;
  /** Items for someone else (another phone_number_id, another AccountSid): never published. */
  foreign: number;
  /** Items that cannot be read: skipped, logged, never published (a retry cannot mend them). */
  invalid: number;
  /** Items that are not chat events (e.g. Telegram update kinds the inbox does not take). */
  ignored: number;
}

/**
 * Runs a channel's mapper on a verified, parsed body; a body that is not the provider's
 * webhook at all becomes 400 with (at most 20 of) the schema issues.
 */
export function mapDelivery(what: string, map: () => ChatMapping): ChatMapping {
  try {
    return map();
  } catch (error) {
    if (!(error instanceof ChatPayloadError)) throw error;
    const issues = Array.isArray(error.details) ? error.details.slice(0, MAX_LOGGED_ITEMS) : error.details;
    throw new Refusal('invalid_schema', `not a ${what}`, { issues });
  }
}

/** The access-log outcome of an acknowledged delivery. */
export function ackOutcome(ack: ChatAck): 'accepted' | 'duplicate' {
  return ack.published === 0 && ack.duplicates > 0 ? 'duplicate' : 'accepted';
}

/** `<provider>:<workspace>:<identity>:<channel>:<event>`; `-` when the registration names no identity (a Telegram channel without botId). */
function chatStoreKey(delivery: ChatDelivery, dedupeKey: string): string {
  const { keyPrefix, workspaceId, identity } = delivery.scope;
  return `${keyPrefix}:${workspaceId}:${identity ?? '-'}:${delivery.channelId}:${dedupeKey}`;
}

interface Claimed {
  draft: ChatEventDraft;
  storeKey: string;
  /** undefined when the idempotency store failed and IDEMPOTENCY_ON_STORE_ERROR=accept. */
  claim?: OwnedClaim;
}

/**
 * Why an event of the delivery is still missing: the reason its own answer would have had,
 * or `bug` for a failure that is not an outage. The first retryable one names the 503.
 */
type Missing = { reason: Reason | 'bug'; error?: unknown };

/**
 * Contract §3/§11 for a verified, mapped delivery: claim each new event → publish them all
 * (one micro-batch, one sink write) → complete each one the sink acknowledged, release the
 * others. Acknowledged events stay done whatever happens to the rest, so the sender's retry
 * publishes only what is missing. 200 (the returned ack) only when nothing is missing;
 * otherwise 503 with Retry-After, 413 when only records too large for the sink are missing,
 * and a programming error is rethrown (500).
 */
export async function acceptChatEvents(deps: IngestDeps, delivery: ChatDelivery): Promise<ChatAck> {
  const { channelId, provider, mapping } = delivery;
  reportSkipped(deps, delivery);

  // The same event can appear twice in one delivery; only its first occurrence is claimed,
  // otherwise the second claim would find the first one in flight.
  const unique = new Map<string, ChatEventDraft>();
  for (const draft of mapping.events) if (!unique.has(draft.dedupeKey)) unique.set(draft.dedupeKey, draft);
  let duplicates = mapping.events.length - unique.size;

  const claims = await Promise.allSettled(
    [...unique.values()].map(async (draft) => {
      const storeKey = chatStoreKey(delivery, draft.dedupeKey);
      return { draft, storeKey, claim: await claimOrDegrade(deps, storeKey, NO_BODY_HASH) };
    }),
  );
  const claimed: Claimed[] = [];
  const missing: Missing[] = [];
  for (const result of claims) {
    if (result.status === 'rejected') {
      // IDEMPOTENCY_ON_STORE_ERROR=refuse: this event waits for the retry; the others go on.
      missing.push({ reason: 'store_unavailable', error: result.reason });
      continue;
    }
    const { draft, storeKey, claim } = result.value;
    if (claim === 'unguarded' || claim.state === 'claimed') {
      claimed.push({ draft, storeKey, ...(claim !== 'unguarded' && { claim }) });
    } else if (claim.state === 'completed') {
      duplicates += 1;
    } else {
      // Another request holds it and has not been acknowledged yet. It may be the very attempt
      // the sender already gave up on, so a 200 here could lose the event if that attempt
      // then fails: the retry finds it completed (a duplicate) or released (published then).
      missing.push({ reason: 'events_in_flight' });
    }
  }

  const published = await publishEach(deps, delivery, claimed, missing);

  if (missing.length > 0) throw missingRefusal(deps, delivery, missing, published);
  return {
    received: mapping.events.length,
    published,
    duplicates,
    foreign: mapping.foreign,
    invalid: mapping.invalid.length,
    ignored: mapping.ignored,
  };
}

/**
 * Publishes each claimed event as its own call to the publisher: the calls land in the same
 * micro-batch (one sink write), and each settles alone, so one refused record never costs
 * the others their acknowledgement. Returns how many were acknowledged.
 */
async function publishEach(deps: IngestDeps, delivery: ChatDelivery, claimed: Claimed[], missing: Missing[]): Promise<number> {
  const { config } = deps;
  const topic = topicName(config, 'chat');
  const source = `/api/channels/${delivery.provider}/${delivery.channelId}`;
  const outcomes = await Promise.allSettled(
    claimed.map(({ draft }) => {
      const event = cloudEvent(draft.type, source, draft.subject, draft.data, delivery.trace);
      // No time of the provider's own (Twilio's webhooks, Telegram's callback queries) or none
      // readable: the time the gateway received it, so `timestamp` is always ISO 8601 (contract §4).
      if (event.data.timestamp === null) event.data = { ...event.data, timestamp: event.time };
      const record = toRecord(topic, `${delivery.channelId}:${draft.subject}`, event);
      return deps.publisher.publish([record], config.PUBLISH_TIMEOUT_MS).then(() => event);
    }),
  );
  let acknowledged = 0;
  await Promise.all(
    outcomes.map((outcome, i) => {
      if (outcome.status === 'fulfilled') {
        acknowledged += 1;
        deps.metrics.events.inc({ type: outcome.value.type });
        return completeClaim(deps, claimed[i], outcome.value);
      }
      const error = outcome.reason;
      const answer = publishRefusal(error);
      missing.push({ reason: answer instanceof Refusal ? answer.reason : 'bug', error });
      return releaseClaim(deps, claimed[i]);
    }),
  );
  return acknowledged;
}

function missingRefusal(deps: IngestDeps, delivery: ChatDelivery, missing: Missing[], published: number): Error {
  const bug = missing.find((m) => m.reason === 'bug');
  if (bug) return publishRefusal(bug.error);
  const retryable = missing.find((m) => m.reason !== 'record_too_large');
  deps.logger.warn(
    { reqId: delivery.requestId, channelId: delivery.channelId, provider: delivery.provider, published, missing: missing.length, reason: (retryable ?? missing[0]).reason },
    'chat delivery answered without every event acknowledged',
  );
  // Only records the sink can never take: a retry cannot help them.
  if (!retryable) return publishRefusal(missing[0].error);
  return new Refusal(
    retryable.reason as Reason,
    'some events of this delivery were not stored; send it again (those stored are dropped as duplicates)',
    { missing: missing.length },
  );
}

function reportSkipped(deps: IngestDeps, delivery: ChatDelivery): void {
  const { provider, channelId, mapping } = delivery;
  const skipped = { invalid: mapping.invalid.length, foreign: mapping.foreign, ignored: mapping.ignored };
  for (const [reason, count] of Object.entries(skipped)) {
    if (count > 0) deps.metrics.chatItemsSkipped.inc({ provider, reason }, count);
  }
  if (mapping.foreign > 0) deps.metrics.foreignByChannel.get(provider)?.inc(mapping.foreign);
  if (skipped.invalid + skipped.foreign === 0) return;
  // Where and what, never the content (it may hold personal data).
  deps.logger.warn(
    { reqId: delivery.requestId, channelId, provider, ...skipped, items: mapping.invalid.slice(0, MAX_LOGGED_ITEMS) },
    'chat items were not published (unreadable or addressed to someone else)',
  );
}

async function completeClaim(deps: IngestDeps, claimed: Claimed, event: CloudEvent<unknown>): Promise<void> {
  if (!claimed.claim) return;
  const response = { status: 200, body: null, eventId: event.id };
  await completeOrRetry(deps, claimed.storeKey, claimed.claim, NO_BODY_HASH, response, CHAT_DEDUPE_WINDOW_MS);
}

async function releaseClaim(deps: IngestDeps, claimed: Claimed): Promise<void> {
  if (claimed.claim) await releaseQuietly(deps, claimed.storeKey, claimed.claim);
}
