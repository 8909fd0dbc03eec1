import { Readable } from 'node:stream';
import type { FileStore } from '../files/file-store';
import { eventFolder } from '../files/object-key';
import { RequestUploads } from '../files/request-uploads';
import { Refusal } from '../outcomes/refusal';
import { recordBytes } from '../publish/batcher';
import type { OutRecord } from '../publish/sink';
import { sha256Hex } from '../security';
import { toRecord, type CloudEvent } from './cloudevent';
import { classifyContentType } from '../body/content-type';

/** `data.body` of an event whose body is stored by reference (contract §12). */
export interface BodyReference {
  type: 'url';
  /** `s3://<bucket>/<prefix><workspaceId>/<triggerPath>/<date>/<eventId>/body` */
  data: string;
  /** The request's Content-Type, as sent (its charset says how to read the bytes). */
  mime: string;
  size: number;
  /** Of the stored bytes, hex: what the consumer checks after fetching them. */
  sha256: string;
}

export interface LargeBody {
  raw: Buffer;
  contentType: string | undefined;
  workspaceId: string;
  path: string;
}

export interface RecordToPublish {
  record: OutRecord;
  /** The body's object, when it went by reference: to delete if the event is not acknowledged. */
  uploads?: RequestUploads;
}

/**
 * The claim check (contract §12): with a file store, a JSON, form or text body whose event is
 * over MAX_RECORD_BYTES is stored once as an object, and the event carries `data.input` = `{}`
 * and `data.body` = its reference instead (`data.common` was taken from the body already).
 * A body itself over MAX_RECORD_BYTES always goes by reference. Without a store, or for a
 * record that fits, the record as it is (the sink answers 413 past the limit). A store that fails: 503 with Retry-After, nothing stored.
 */
export async function recordOrClaimCheck(
  files: FileStore | undefined,
  maxRecordBytes: number,
  topic: string,
  key: string,
  event: CloudEvent<{ input: unknown; body?: BodyReference }>,
  body: LargeBody | undefined,
): Promise<RecordToPublish> {
  const kind = body && classifyContentType(body.contentType)?.kind;
  const eligible = files && body && kind !== undefined && kind !== 'multipart';
  // A body over the limit goes by reference without serialising its event first (25 MB of
  // JSON.stringify to learn that it does not fit); a smaller one only when its event is over.
  if (!eligible || body.raw.length <= maxRecordBytes) {
    const record = toRecord(topic, key, event);
    if (!eligible || recordBytes(record) <= maxRecordBytes) return { record };
  }

  const mime = body.contentType?.trim() || 'application/octet-stream';
  const uploads = new RequestUploads(files);
  const objectKey = `${eventFolder(body.workspaceId, body.path, event.id, new Date(event.time))}body`;
  let stored;
  try {
    stored = await uploads.put(objectKey, Readable.from(slices(body.raw)), mime);
  } catch (error) {
    void uploads.discard(error);
    if (error instanceof Refusal) throw error;
    throw new Refusal('file_store_unavailable', 'the file store did not take the body; send it again', {});
  }
  event.data.input = {};
  event.data.body = { type: 'url', data: stored.url, mime, size: body.raw.length, sha256: sha256Hex(body.raw) };
  return { record: toRecord(topic, key, event), uploads };
}

/** The body in slices (no copies), so the upload cuts its parts from them as from a socket's chunks. */
function* slices(raw: Buffer, size = 1024 * 1024): Generator<Buffer> {
  for (let at = 0; at < raw.length; at += size) yield raw.subarray(at, at + size);
}
