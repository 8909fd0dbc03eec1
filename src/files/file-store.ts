import type { Readable } from 'node:stream';
import type { Lifecycle } from '../lifecycle';

/** Where a stored file can be fetched by the consumers of the event. */
export interface StoredObject {
  /** `s3://<bucket>/<key>` */
  url: string;
  /** The object's whole key (the store's prefix included): what `discard` takes. */
  key: string;
}

export interface PutOptions {
  contentType: string;
  /** Aborting it stops the upload; whatever it had written is aborted or deleted. */
  signal: AbortSignal;
  /** Where the part buffers the put holds are counted (the request's share of the body budget). */
  memory?: PartMemory;
}

/**
 * The memory a put holds for its part buffers (contract §12: the body budget counts what a
 * request actually holds). `acquire` waits for room, the body paused meanwhile, and rejects
 * (with the answer to give) when there is none in time; `release` gives a sent part back.
 */
export interface PartMemory {
  acquire(bytes: number, signal: AbortSignal): Promise<void>;
  release(bytes: number): void;
}

/**
 * Files by reference (contract §12): the one interface of a file store. `put` streams a body
 * to an object under the store's prefix + `key` and resolves once the object exists; when it rejects (the body failed, the
 * signal aborted, the store failed) nothing of it is left behind: a partial multipart upload
 * is aborted, and an abort the store refused now is retried in the background. `discard`
 * deletes objects a request wrote and will not be acknowledged; it never rejects (what fails
 * now is retried in the background). `bufferBytes` is the most one `put` holds in memory.
 */
export interface FileStore extends Lifecycle {
  readonly name: string;
  readonly bufferBytes: number;
  put(key: string, body: Readable, options: PutOptions): Promise<StoredObject>;
  discard(keys: string[]): Promise<void>;
}

/** A store operation failed or took too long: the request is answered 503 (send it again). */
export class FileStoreError extends Error {
  constructor(
    message: string,
    readonly op: string,
  ) {
    super(message);
    this.name = 'FileStoreError';
  }
}
