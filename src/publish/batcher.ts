import { PublishError } from './errors';
import { PartialWriteError, type OutRecord, type Sink } from './sink';

export interface BatcherOptions {
  maxRecords: number;
  maxBytes: number;
  lingerMs: number;
  queueMax: number;
  maxRecordBytes: number;
  /**
   * A sink write that has not settled by then counts as failed, so one hung write (an fsync
   * that never returns) cannot hold every later batch for good. Its callers have had their
   * 503 by then.
   */
  writeTimeoutMs?: number;
}

export interface BatchObserver {
  batchWritten(records: number, bytes: number, ms: number, ok: boolean): void;
}

interface Pending {
  record: OutRecord;
  bytes: number;
  call: Call;
}

/** One publish() call: it succeeds when all of its records are acknowledged. */
interface Call {
  remaining: number;
  settled: boolean;
  resolve(): void;
  reject(error: Error): void;
}

/**
 * Gathers records from concurrent requests for a few milliseconds (or until a count or byte
 * bound) and hands them to the sink as one batch, one batch in flight at a time, so that
 * the next batch fills while the sink works. Each caller resumes when its own records are
 * acknowledged and fails alone on its own deadline.
 */
export class MicroBatcher {
  private queue: Pending[] = [];
  private queuedBytes = 0;
  private timer?: NodeJS.Timeout;
  private writing?: Promise<void>;
  private closed = false;

  constructor(
    private readonly sink: Sink,
    private readonly options: BatcherOptions,
    private readonly observer?: BatchObserver,
  ) {}

  get queued(): number {
    return this.queue.length;
  }

  publish(records: OutRecord[], timeoutMs: number): Promise<void> {
    if (this.closed) return Promise.reject(new PublishError('closed', 'publisher is shutting down'));
    if (records.length === 0) return Promise.resolve();
    const sized = records.map((record) => ({ record, bytes: recordBytes(record) }));
    if (sized.some((s) => s.bytes > this.options.maxRecordBytes)) {
      return Promise.reject(new PublishError('too_large', `record exceeds ${this.options.maxRecordBytes} bytes`));
    }
    if (this.queue.length + records.length > this.options.queueMax) {
      return Promise.reject(new PublishError('queue_full', 'publish queue is full'));
    }
    return new Promise<void>((resolve, reject) => {
      const timeout = setTimeout(() => {
        settle(call, new PublishError('timeout', `sink did not acknowledge within ${timeoutMs} ms`));
        this.dropQueued(call);
      }, timeoutMs);
      const call: Call = {
        remaining: records.length,
        settled: false,
        resolve: () => (clearTimeout(timeout), resolve()),
        reject: (error) => (clearTimeout(timeout), reject(error)),
      };
      for (const s of sized) {
        this.queue.push({ ...s, call });
        this.queuedBytes += s.bytes;
      }
      this.schedule();
    });
  }

  /** Sends what is queued now and resolves when nothing is queued or being written. */
  async flush(): Promise<void> {
    while (this.queue.length > 0 || this.writing) {
      if (!this.writing) this.drain();
      await this.writing;
    }
  }

  /** Refuses new records, then flushes the rest. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }

  private schedule(): void {
    if (this.writing) return; // the running write drains again when it ends
    const full = this.queue.length >= this.options.maxRecords || this.queuedBytes >= this.options.maxBytes;
    if (full || this.options.lingerMs === 0) {
      this.drain();
    } else {
      this.timer ??= setTimeout(() => this.drain(), this.options.lingerMs);
    }
  }

  private drain(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.writing || this.queue.length === 0) return;
    const batch = this.takeBatch();
    this.writing = this.write(batch).finally(() => {
      this.writing = undefined;
      if (this.queue.length > 0) this.schedule();
    });
  }

  private takeBatch(): Pending[] {
    let count = 0;
    let bytes = 0;
    while (
      count < this.queue.length &&
      count < this.options.maxRecords &&
      (count === 0 || bytes + this.queue[count].bytes <= this.options.maxBytes)
    ) {
      bytes += this.queue[count].bytes;
      count++;
    }
    const batch = this.queue.slice(0, count);
    this.queue = this.queue.slice(count);
    this.queuedBytes -= bytes;
    return batch;
  }

  private async write(batch: Pending[]): Promise<void> {
    const started = performance.now();
    const bytes = batch.reduce((sum, p) => sum + p.bytes, 0);
    try {
      await this.withWriteTimeout(this.sink.write(batch.map((p) => p.record)));
      this.observer?.batchWritten(batch.length, bytes, performance.now() - started, true);
      for (const p of batch) if (--p.call.remaining === 0) settle(p.call);
    } catch (error) {
      this.observer?.batchWritten(batch.length, bytes, performance.now() - started, false);
      const failed = new Set<Call>();
      if (error instanceof PartialWriteError) {
        // Only the records named failed; the rest of the batch was acknowledged.
        batch.forEach((p, i) => {
          const failure = error.failures.get(i);
          if (failure) {
            failed.add(p.call);
            settle(p.call, failure);
          } else if (--p.call.remaining === 0) {
            settle(p.call);
          }
        });
      } else {
        const failure =
          error instanceof PublishError ? error : new PublishError('unavailable', `sink ${this.sink.name} failed`);
        for (const p of batch) {
          failed.add(p.call);
          settle(p.call, failure);
        }
      }
      // A failed call's records that are still queued (a call larger than one batch) are not
      // sent: its sender was told to send it all again.
      for (const call of failed) this.dropQueued(call);
    }
  }

  private withWriteTimeout(write: Promise<void>): Promise<void> {
    const limit = this.options.writeTimeoutMs;
    if (limit === undefined) return write;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new PublishError('timeout', `sink ${this.sink.name} did not answer within ${limit} ms`)), limit);
    });
    return Promise.race([write, timeout]).finally(() => clearTimeout(timer));
  }

  /** A timed-out or failed call's records that were not handed to the sink yet are not sent at all. */
  private dropQueued(call: Call): void {
    const kept = this.queue.filter((p) => p.call !== call);
    if (kept.length === this.queue.length) return;
    this.queuedBytes = kept.reduce((sum, p) => sum + p.bytes, 0);
    this.queue = kept;
  }
}

function settle(call: Call, error?: Error): void {
  if (call.settled) return;
  call.settled = true;
  if (error) call.reject(error);
  else call.resolve();
}

export function recordBytes(record: OutRecord): number {
  let bytes = Buffer.byteLength(record.value) + Buffer.byteLength(record.key);
  for (const name in record.headers) bytes += Buffer.byteLength(name) + Buffer.byteLength(record.headers[name]);
  return bytes;
}
