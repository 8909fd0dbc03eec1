import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { FileStore, PartMemory } from '../files/file-store';
import { eventFolder, fileKey } from '../files/object-key';
import { RequestUploads } from '../files/request-uploads';
import { Refusal } from '../outcomes/refusal';
import type { StoredTrigger } from '../registry/schemas';
import type { EventTrace } from '../http/context';
import { answerEarlierClaim, eventHeaders, publishTriggerEvent, type DeliveryFacts, type HeldKey, type WebhookAck } from './accept-webhook';
import { identityContentType, multipartIdentity } from './body-identity';
import { applyInputFormat } from './coerce';
import { checkInputSchema } from './input-schema';
import { refuseUrlShape } from './file-values';
import { claimOrDegrade, releaseQuietly } from './guarded-store';
import { publishableQuery } from './headers';
import { fingerprintHeldByAnother, headerIdempotencyKey, resolveIdempotencyKey, triggerStoreKey, type IdempotencyKey } from './idempotency-key';
import type { IngestDeps } from './ports';
import type { BodyLease } from './body-budget';
import { noRoom } from './read-body';
import { streamMultipart, type StreamedMultipart } from './stream-multipart';

/** Stored on a key claimed before its body was read; the real hash replaces it on completion. */
const BODY_NOT_READ = 'body-not-read-yet';

export interface UploadRequest {
  path: string;
  trigger: StoredTrigger;
  method: string;
  headers: IncomingHttpHeaders;
  query: Record<string, unknown>;
  /** The request itself: read here, once, while it arrives. */
  body: Readable;
  /** W3C trace context the event carries. */
  trace?: EventTrace;
  /** The request's share of the body budget: its text parts and inline files, and its uploads' part buffers. */
  memory: BodyLease;
  /** Told the key as soon as it is known (the delivery log's `idempotencyKey`, on a 409 or 503 too). */
  note?: (facts: DeliveryFacts) => void;
}

/**
 * Contract §12: a multipart request to a trigger when a file store is configured. Its files
 * stream to the store while the body arrives; the event carries their `s3://` URLs. An
 * explicit key from the headers is claimed first, so a replay stores nothing. Whatever ends
 * the request other than a fresh 2xx (4xx, 413 mid-file, 503, a duplicate found after the
 * body) discards every object the request wrote (aborting the uploads still running).
 */
export async function acceptUpload(deps: IngestDeps & { files: FileStore }, req: UploadRequest): Promise<WebhookAck> {
  const { config } = deps;
  const { path, trigger } = req;
  const contentType = req.headers['content-type'] as string;
  const maxBodyBytes = config.MAX_BODY_BYTES + config.MAX_FILES * config.MAX_FILE_BYTES;
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBodyBytes) {
    throw new Refusal('body_too_large', `the body exceeds ${maxBodyBytes} bytes`, { limit: maxBodyBytes });
  }
  const query = publishableQuery(req.query);
  refuseUrlShape('query', query);
  const headers = eventHeaders(req.headers, trigger);
  refuseUrlShape('headers', headers);
  const early = await claimHeaderKey(deps, req);
  if (early && 'ack' in early) return early.ack;

  const eventId = randomUUID();
  const folder = eventFolder(trigger.workspaceId, path, eventId, new Date());
  const uploads = new RequestUploads(deps.files, partMemory(req.memory, config.REQUEST_TIMEOUT_MS));
  let held: HeldKey | undefined = early;
  let handedOver = false;
  try {
    const streamed = await streamMultipart(
      req.body,
      contentType,
      {
        maxFileBytes: config.MAX_FILE_BYTES,
        maxFiles: config.MAX_FILES,
        maxFields: config.MAX_FIELDS,
        maxFieldBytes: config.MAX_BODY_BYTES,
        maxTextBytes: config.MAX_BODY_BYTES,
        maxBodyBytes,
        inlineFileBytes: config.INLINE_FILE_MAX_BYTES,
      },
      req.memory,
      {
        put: (n, filename, body, mime) => uploads.put(fileKey(folder, n, filename), body, mime),
      },
      (bytes) => req.note?.({ bytes }),
    );
    refuseUrlShape('$', streamed.fields);
    const parsed = { input: streamed.fields, value: streamed.fields };
    applyInputFormat(parsed.input, trigger.inputFormat, config.MAX_FILE_BYTES);
    if (trigger.schema !== undefined) await checkInputSchema(parsed.input, trigger.schema, trigger.workspaceId);
    const key = early?.key ?? bodyKey(req, streamed, query, contentType);
    if (early) {
      held = { ...early, bodyHash: streamed.bodyHash }; // its key was noted when it was claimed
    } else {
      req.note?.({ idempotencyKey: key.value });
      const storeKey = triggerStoreKey(trigger, path, key);
      const claim = await claimOrDegrade(deps, storeKey, streamed.bodyHash);
      let owned: HeldKey['claim'] = 'unguarded';
      if (claim === 'unguarded' || claim.state === 'claimed') owned = claim;
      else if (fingerprintHeldByAnother(key, claim)) {
        deps.logger.warn({ path }, 'a fingerprint key is held by a sender key of the previous layout: published without it');
      } else {
        void uploads.discard(new Error('a duplicate'));
        return answerEarlierClaim(claim, key.explicit, trigger);
      }
      held = { storeKey, claim: owned, bodyHash: streamed.bodyHash };
    }
    const owned = held;
    held = undefined; // from here publishTriggerEvent releases the claim itself when it fails
    const parts = { path, trigger, method: req.method, headers, contentType, query, key, parsed, eventId, trace: req.trace, uploads };
    handedOver = true; // from here publishTriggerEvent drops or keeps the objects (the sink may hold the event)
    return await publishTriggerEvent(deps, parts, owned);
  } catch (error) {
    // The sender is answered at once; its objects go meanwhile (their keys are this event's
    // alone, so a retry never meets them). A sender still sending reads the answer sooner.
    if (!handedOver) void uploads.discard(error);
    if (held && held.claim !== 'unguarded') await releaseQuietly(deps, held.storeKey, held.claim);
    throw error;
  }
}

/**
 * Part buffers from the request's share, waited for while a share or the budget is full (other
 * uploads give theirs back as their parts are sent): a sender's concurrent uploads queue for
 * memory instead of being refused. Past the request's time: 429 or 503, send it again.
 */
function partMemory(lease: BodyLease, timeoutMs: number): PartMemory {
  return {
    async acquire(bytes, signal) {
      const refusal = await lease.takeWhenFree(bytes, AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]));
      if (refusal) throw noRoom(refusal);
    },
    release: (bytes) => lease.giveBack(bytes),
  };
}

type EarlyClaim = HeldKey & { key: IdempotencyKey };

/**
 * Claims the header's key before any byte is stored. A replay is answered after the body was
 * hashed (not stored): the same body gets the first acknowledgement, another body 409.
 */
async function claimHeaderKey(deps: IngestDeps, req: UploadRequest): Promise<EarlyClaim | { ack: WebhookAck } | undefined> {
  const key = headerIdempotencyKey(req.headers);
  if (!key) return undefined;
  req.note?.({ idempotencyKey: key.value });
  const storeKey = triggerStoreKey(req.trigger, req.path, key);
  // The body may take up to REQUEST_TIMEOUT_MS to arrive; the claim must outlast it.
  const leaseMs = deps.config.REQUEST_TIMEOUT_MS + deps.config.PUBLISH_TIMEOUT_MS + 10_000;
  const claim = await claimOrDegrade(deps, storeKey, BODY_NOT_READ, leaseMs);
  if (claim === 'unguarded' || claim.state === 'claimed') return { storeKey, claim, bodyHash: BODY_NOT_READ, key };
  if (claim.state === 'in_flight') return { ack: answerEarlierClaim(claim, false, req.trigger) };
  const bodyHash = await replayIdentity(deps, req);
  // The same claim again, now with the body's hash: the stored record says whether it is the same body.
  const again = await claimOrDegrade(deps, storeKey, bodyHash);
  if (again !== 'unguarded' && again.state !== 'claimed') return { ack: answerEarlierClaim(again, true, req.trigger) };
  // The record expired in between: the body is consumed, so this sender has to send it again.
  if (again !== 'unguarded') await releaseQuietly(deps, storeKey, again);
  throw new Refusal('in_flight', 'the idempotency key changed state while the body was read; send it again', {});
}

function bodyKey(req: UploadRequest, streamed: StreamedMultipart, query: Record<string, unknown>, contentType: string): IdempotencyKey {
  return resolveIdempotencyKey(req.headers, streamed.fields, req.trigger.idempotency?.keyField, {
    method: req.method,
    path: req.path,
    query,
    contentType: identityContentType(contentType),
    bodyHash: streamed.bodyHash,
  });
}

/** Reads a replay's body only for its identity (contract §5): compared, never stored. */
function replayIdentity(deps: IngestDeps, req: UploadRequest): Promise<string> {
  const { config } = deps;
  return multipartIdentity(req.body, req.headers['content-type'] as string, {
    maxFileBytes: config.MAX_FILE_BYTES,
    maxFiles: config.MAX_FILES,
    maxFields: config.MAX_FIELDS,
    maxFieldBytes: config.MAX_BODY_BYTES,
    maxBodyBytes: config.MAX_BODY_BYTES + config.MAX_FILES * config.MAX_FILE_BYTES,
  });
}
