import type { Readable } from 'node:stream';
import type { FileStore, PartMemory, StoredObject } from './file-store';

/**
 * The objects one request writes, so that nothing outlives a request that is not
 * acknowledged: `discard` stops the uploads still running (each aborts its multipart upload)
 * and deletes the objects already stored.
 */
export class RequestUploads {
  private readonly controller = new AbortController();
  private readonly settled: Promise<StoredObject | undefined>[] = [];

  constructor(
    private readonly store: FileStore,
    /** Where the uploads' part buffers are counted. */
    private readonly memory?: PartMemory,
  ) {}

  get count(): number {
    return this.settled.length;
  }

  put(key: string, body: Readable, contentType: string): Promise<StoredObject> {
    if (this.controller.signal.aborted) {
      body.resume();
      return Promise.reject(this.controller.signal.reason);
    }
    const put = this.store.put(key, body, { contentType, signal: this.controller.signal, memory: this.memory });
    this.settled.push(put.catch(() => undefined));
    return put;
  }

  /** Never rejects; resolves once every upload of the request has stopped and its objects are gone (or queued for deletion). */
  async discard(reason: unknown): Promise<void> {
    this.controller.abort(reason instanceof Error ? reason : new Error('the request was not acknowledged'));
    const stored = (await Promise.all(this.settled)).filter((object): object is StoredObject => object !== undefined);
    if (stored.length > 0) await this.store.discard(stored.map((object) => object.key));
  }
}
