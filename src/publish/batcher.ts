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
  /** performance.now() when it was queued */
  at: number;
}

/** One publish() call: it succeeds when all of its records are acknowledged. */
interface Call {
  remaining: number;
  /** Its records in a sink write that has not answered yet. */
  inWrite: number;
  /** Its records acknowledged by the sink. */
  acknowledged: number;
  settled: boolean;
  /** Its records still in the queue (not handed to the sink), and their bytes. */
  queuedRecords: number;
  queuedBytes: number;
  resolve(): void;
  reject(error: Error): void;
}

/** Past this many dead entries at the queue's head, the array is compacted. */
const COMPACT_AFTER = 1024;

/**
 * Gathers records from concurrent requests for a few milliseconds (or until a count or byte
 * bound) and hands them to the sink as one batch, one batch in flight at a time, so that
 * the next batch fills while the sink works. Each caller resumes when its own records are
 * acknowledged and fails alone on its own deadline.
 *
 * The queue is an array read from `head`; a failed or timed-out call's records stay in it,
 * uncounted, and are skipped when a batch is taken, so dropping a call costs O(1).
 */
export class MicroBatcher {
  private queue: Pending[] = [];
  private head = 0;
  private queuedRecords = 0;
  private queuedBytes = 0;
  private timer?: NodeJS.Timeout;
  private soon?: NodeJS.Immediate;
  private writing?: Promise<void>;
  private closed = false;

  constructor(
    private readonly sink: Sink,
    private readonly options: BatcherOptions,
    private readonly observer?: BatchObserver,
  ) {}

  get queued(): number {
    return this.queuedRecords;
  }

  publish(records: OutRecord[], timeoutMs: number): Promise<void> {
    if (this.closed) return Promise.reject(new PublishError('closed', 'publisher is shutting down'));
    if (records.length === 0) return Promise.resolve();
    const sized = records.map((record) => ({ record, bytes: recordBytes(record) }));
    if (sized.some((s) => s.bytes > this.options.maxRecordBytes)) {
      return Promise.reject(new PublishError('too_large', `record exceeds ${this.options.maxRecordBytes} bytes`));
    }
    if (this.queuedRecords + records.length > this.options.queueMax) {
      return Promise.reject(new PublishError('queue_full', 'publish queue is full'));
    }
    return new Promise<void>((resolve, reject) => {
      const timeout = setTimeout(
        () => this.fail(call, new PublishError('timeout', `sink did not acknowledge within ${timeoutMs} ms`)),
        timeoutMs,
      );
      const call: Call = {
        remaining: records.length,
        inWrite: 0,
        acknowledged: 0,
        settled: false,
        queuedRecords: 0,
        queuedBytes: 0,
        resolve: () => (clearTimeout(timeout), resolve()),
        reject: (error) => (clearTimeout(timeout), reject(error)),
      };
      const at = performance.now();
      for (const s of sized) {
        this.queue.push({ ...s, call, at });
        call.queuedRecords++;
        call.queuedBytes += s.bytes;
      }
      this.queuedRecords += call.queuedRecords;
      this.queuedBytes += call.queuedBytes;
      this.schedule();
    });
  }

  /** Sends what is queued now and resolves when nothing is queued or being written. */
  async flush(): Promise<void> {
    while (this.queuedRecords > 0 || this.writing) {
      if (!this.writing) this.drain();
      await this.writing;
    }
  }

  /** Refuses new records, then flushes the rest. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }

  /**
   * A batch lingers from its oldest record's arrival, not from the end of the previous write:
   * records that queued up while a write was under way have been waiting already, and go as
   * soon as it ends (`afterWrite`) once their linger is over. Otherwise, unless it is full, a
   * batch goes no sooner than the end of this turn of the event loop, so the records of
   * requests that resumed together (one Redis reply answers many) travel together.
   */
  private schedule(afterWrite = false): void {
    if (this.writing || this.queuedRecords === 0) return; // the running write drains again when it ends
    this.skipDropped();
    const full = this.queuedRecords >= this.options.maxRecords || this.queuedBytes >= this.options.maxBytes;
    const left = this.options.lingerMs - (performance.now() - this.queue[this.head].at);
    if (full || (afterWrite && left <= 0)) {
      this.drain();
    } else if (left <= 0) {
      this.soon ??= setImmediate(() => this.drain());
    } else {
      this.timer ??= setTimeout(() => this.drain(), left);
    }
  }

  private drain(): void {
    clearTimeout(this.timer);
    clearImmediate(this.soon);
    this.timer = undefined;
    this.soon = undefined;
    if (this.writing || this.queuedRecords === 0) return;
    // `ended` may run before writeNext returns (a sink that throws at once): a no-op then, and
    // the write's own end releases the batcher.
    let done: Promise<void> | undefined;
    const ended = () => done && this.writeEnded(done);
    done = this.writeNext(ended).finally(ended);
    this.writing = done;
  }

  /**
   * The sink answered `write`: the next batch may go, before this one's callers resume (their
   * answers are written in the meantime, so the next write overlaps them instead of waiting
   * for the turn's end). A no-op once the next write has started.
   */
  private writeEnded(write: Promise<void>): void {
    if (this.writing !== write) return;
    this.writing = undefined;
    this.schedule(true);
  }

  /** The next batch, taken once the sink can send it (or failed unsent if it cannot); `answered` once the sink answered it. */
  private async writeNext(answered: () => void): Promise<void> {
    if (this.sink.ready) {
      try {
        await this.sink.ready();
      } catch (error) {
        const failure = error instanceof Error ? error : new Error(String(error));
        for (const p of this.takeBatch()) this.fail(p.call, failure);
        return;
      }
    }
    const batch = this.takeBatch();
    if (batch.length > 0) await this.write(batch, answered);
  }

  private takeBatch(): Pending[] {
    const batch: Pending[] = [];
    let bytes = 0;
    while (this.head < this.queue.length && batch.length < this.options.maxRecords) {
      const next = this.queue[this.head];
      if (next.call.settled) {
        this.head++; // dropped: already uncounted
        continue;
      }
      if (batch.length > 0 && bytes + next.bytes > this.options.maxBytes) break;
      batch.push(next);
      bytes += next.bytes;
      next.call.queuedRecords--;
      next.call.queuedBytes -= next.bytes;
      this.head++;
    }
    this.queuedRecords -= batch.length;
    this.queuedBytes -= bytes;
    this.skipDropped();
    return batch;
  }

  /** Moves `head` past dropped records and compacts the array once its dead head is large. */
  private skipDropped(): void {
    while (this.head < this.queue.length && this.queue[this.head].call.settled) this.head++;
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    } else if (this.head > COMPACT_AFTER && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }

  private async write(batch: Pending[], answered: () => void): Promise<void> {
    const started = performance.now();
    const bytes = batch.reduce((sum, p) => sum + p.bytes, 0);
    try {
      for (const p of batch) p.call.inWrite++;
      const written = this.sink.write(batch.map((p) => p.record)).finally(() => {
        for (const p of batch) p.call.inWrite--;
      });
      await this.withWriteTimeout(written);
      this.observer?.batchWritten(batch.length, bytes, performance.now() - started, true);
      answered();
      for (const p of batch) this.acknowledge(p.call);
    } catch (error) {
      this.observer?.batchWritten(batch.length, bytes, performance.now() - started, false);
      if (error instanceof PartialWriteError) {
        // Only the records named failed; the rest of the batch was acknowledged.
        batch.forEach((p, i) => {
          const failure = error.failures.get(i);
          if (failure) this.fail(p.call, failure);
          else this.acknowledge(p.call);
        });
      } else {
        // A PublishError is the sink's answer ("send it again", or too large); anything else
        // is a bug, and reaches the callers as it is (a 500, never "retry later").
        for (const p of batch) this.fail(p.call, error instanceof Error ? error : new Error(String(error)));
      }
      answered(); // after the failed calls' queued records were dropped: none of them goes
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

  private acknowledge(call: Call): void {
    call.acknowledged++;
    if (--call.remaining === 0) this.succeed(call);
  }

  private succeed(call: Call): void {
    if (call.settled) return;
    call.settled = true;
    call.resolve();
  }

  /**
   * Rejects a call once. Its records that were not handed to the sink yet (a call larger than
   * one batch, or one that timed out while queued) are not sent at all: its sender was told
   * to send it all again. They stay in the array, uncounted, until a batch skips them.
   * Records already in a write that has not answered cannot be withdrawn: the sink may still
   * acknowledge them, and the error says so (`sinkMayHold`).
   */
  private fail(call: Call, error: Error): void {
    if (call.settled) return;
    call.settled = true;
    this.queuedRecords -= call.queuedRecords;
    this.queuedBytes -= call.queuedBytes;
    call.queuedRecords = 0;
    call.queuedBytes = 0;
    const mayHold = call.inWrite > 0 || call.acknowledged > 0;
    if (mayHold && error instanceof PublishError && !error.sinkMayHold) {
      call.reject(new PublishError(error.reason, error.message, error.topic, true));
    } else {
      call.reject(error);
    }
  }
}

export function recordBytes(record: OutRecord): number {
  let bytes = Buffer.byteLength(record.value) + Buffer.byteLength(record.key);
  for (const name in record.headers) bytes += Buffer.byteLength(name) + Buffer.byteLength(record.headers[name]);
  return bytes;
}
