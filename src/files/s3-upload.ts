import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  UploadPartCommand,
  type CompletedPart,
  type S3Client,
} from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import { FileStoreError, type PartMemory } from './file-store';

/** S3's smallest part (all but the last). */
export const MIN_PART_BYTES = 5 * 1024 * 1024;

export interface UploadTarget {
  bucket: string;
  key: string;
  contentType: string;
}

export interface UploadOptions {
  partBytes: number;
  /** The caller's abort (the request failed): stops reading and uploading. */
  signal: AbortSignal;
  /** Longest wait for one store call (SDK retries included). */
  timeoutMs: number;
  /** Each part buffer is held from here while it fills and until it is sent. */
  memory?: PartMemory;
}

/**
 * Streams `body` to one object. A body smaller than a part is one PutObject; a larger one a
 * multipart upload with at most one part in flight while the next part fills, so the memory
 * it holds is about two parts whatever the body's size (a full part pauses the body:
 * backpressure reaches the sender). Each part's buffer is acquired from `memory` before it
 * fills (waiting, the body paused, while there is no room) and released once it is sent: a
 * part once acquired is sent without needing more, so uploads waiting for memory always move
 * on. Any failure aborts the multipart upload before it rejects;
 * an abort that fails too (the store is down) is the caller's to clean up later.
 *
 * Written on client-s3 rather than lib-storage's Upload: its abort() settles before the
 * multipart upload is aborted (and an abort that fails is not reported), so no caller could
 * promise that nothing is left behind.
 */
export async function uploadStream(client: S3Client, target: UploadTarget, body: Readable, options: UploadOptions): Promise<void> {
  const { bucket: Bucket, key: Key, contentType: ContentType } = target;
  /** One store call under the caller's signal and the call's own deadline; its failure a FileStoreError. */
  const send = async <T>(op: string, call: (opts: { abortSignal: AbortSignal }) => Promise<T>): Promise<T> => {
    try {
      return await call({ abortSignal: AbortSignal.any([options.signal, AbortSignal.timeout(options.timeoutMs)]) });
    } catch (error) {
      throw new FileStoreError(`${op}: ${describe(error)}`, op);
    }
  };
  const stopReading = () => body.destroy(options.signal.reason instanceof Error ? options.signal.reason : new Error('upload aborted'));
  if (options.signal.aborted) stopReading();
  else options.signal.addEventListener('abort', stopReading, { once: true });

  let heldBytes = 0;
  const holdPart = async () => {
    if (!options.memory) return;
    await options.memory.acquire(options.partBytes, options.signal);
    heldBytes += options.partBytes;
  };
  const releasePart = (all = false) => {
    const bytes = all ? heldBytes : Math.min(options.partBytes, heldBytes);
    if (!options.memory || bytes === 0) return;
    heldBytes -= bytes;
    options.memory.release(bytes);
  };

  let uploadId: string | undefined;
  const parts: CompletedPart[] = [];
  let inFlight: Promise<void> | undefined;
  let partFailure: unknown;
  const sendPart = (data: Buffer) => {
    const PartNumber = parts.length + 1;
    parts.push({ PartNumber });
    return send('upload_part', (opts) => client.send(new UploadPartCommand({ Bucket, Key, UploadId: uploadId, PartNumber, Body: data }), opts)).then(
      (result) => {
        releasePart();
        parts[PartNumber - 1].ETag = result.ETag;
      },
      (error: unknown) => {
        releasePart();
        partFailure = error;
        body.destroy(error instanceof Error ? error : new Error(String(error)));
      },
    );
  };
  const afterInFlight = async () => {
    await inFlight;
    if (partFailure !== undefined) throw partFailure;
  };

  let chunks: Buffer[] = [];
  let buffered = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      if (buffered === 0) await holdPart();
      chunks.push(chunk);
      buffered += chunk.length;
      if (buffered < options.partBytes) continue;
      const part = Buffer.concat(chunks, buffered);
      chunks = [];
      buffered = 0;
      if (uploadId === undefined) {
        const created = await send('create_multipart', (opts) => client.send(new CreateMultipartUploadCommand({ Bucket, Key, ContentType }), opts));
        uploadId = created.UploadId;
      }
      await afterInFlight();
      inFlight = sendPart(part);
    }
    await afterInFlight();
    const rest = Buffer.concat(chunks, buffered);
    chunks = [];
    if (uploadId === undefined) {
      await send('put_object', (opts) => client.send(new PutObjectCommand({ Bucket, Key, ContentType, Body: rest, ContentLength: rest.length }), opts));
      return;
    }
    if (rest.length > 0) {
      inFlight = sendPart(rest);
      await afterInFlight();
    }
    const completion = { Bucket, Key, UploadId: uploadId, MultipartUpload: { Parts: parts } };
    await send('complete_multipart', (opts) => client.send(new CompleteMultipartUploadCommand(completion), opts));
  } catch (error) {
    chunks = [];
    await inFlight;
    if (uploadId !== undefined) await abortQuietly(client, { Bucket, Key, UploadId: uploadId }, options.timeoutMs);
    throw partFailure ?? error;
  } finally {
    releasePart(true);
    options.signal.removeEventListener('abort', stopReading);
  }
}

async function abortQuietly(client: S3Client, upload: { Bucket: string; Key: string; UploadId: string }, timeoutMs: number): Promise<void> {
  try {
    // Not under the caller's signal: that one may be what aborted the upload.
    await client.send(new AbortMultipartUploadCommand(upload), { abortSignal: AbortSignal.timeout(timeoutMs) });
  } catch {
    // The caller cleans the key up later.
  }
}

/** The SDK's error name and message, never a request (it can carry a signed URL). */
export function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return `${error.name}: ${error.message}`.slice(0, 300);
}
