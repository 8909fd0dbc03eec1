import { MicroBatcher, recordBytes, type BatcherOptions } from '../../src/publish/batcher';
import { PublishError } from '../../src/publish/errors';
import type { OutRecord, Sink } from '../../src/publish/sink';

/** A sink whose writes the test acknowledges or fails by hand (or at once with auto). */
class FakeSink implements Sink {
  readonly name = 'fake';
  readonly batches: OutRecord[][] = [];
  readonly pending: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
  inFlight = 0;
  maxInFlight = 0;

  constructor(private auto: 'ack' | 'manual' | Error = 'ack') {}

  async start(): Promise<void> {}
  async ping(): Promise<void> {}
  async close(): Promise<void> {}

  async write(records: OutRecord[]): Promise<void> {
    this.batches.push(records);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      if (this.auto instanceof Error) throw this.auto;
      if (this.auto === 'manual') await new Promise<void>((resolve, reject) => this.pending.push({ resolve, reject }));
    } finally {
      this.inFlight--;
    }
  }

  /** Acknowledges the oldest pending write. */
  ack(): void {
    const next = this.pending.shift();
    if (!next) throw new Error('no pending write');
    next.resolve();
  }

  fail(error: Error): void {
    const next = this.pending.shift();
    if (!next) throw new Error('no pending write');
    next.reject(error);
  }
}

const options = (overrides: Partial<BatcherOptions> = {}): BatcherOptions => ({
  maxRecords: 100,
  maxBytes: 1024 * 1024,
  lingerMs: 5,
  queueMax: 1000,
  maxRecordBytes: 10_000,
  ...overrides,
});

const rec = (id: string, size = 10): OutRecord => ({ topic: 't', key: `k-${id}`, headers: { ce_id: id }, value: id.padEnd(size, '.') });
const ids = (batch: OutRecord[]) => batch.map((r) => r.headers.ce_id);

/** Lets pending promise callbacks and timers of 0 ms run. */
const tick = () => new Promise((resolve) => setImmediate(resolve));

/** 'pending', 'resolved' or the rejection's reason, without waiting. */
async function state(promise: Promise<unknown>): Promise<string> {
  let result = 'pending';
  promise.then(
    () => (result = 'resolved'),
    (error: unknown) => (result = error instanceof PublishError ? error.reason : String(error)),
  );
  await tick();
  return result;
}

async function reasonOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(PublishError);
    return (error as PublishError).reason;
  }
  throw new Error('expected a rejection');
}

describe('MicroBatcher', () => {
  it('gathers concurrent calls into one write and resolves each', async () => {
    const sink = new FakeSink();
    const batcher = new MicroBatcher(sink, options());
    const calls = Array.from({ length: 20 }, (_, i) => batcher.publish([rec(`r${i}`)], 1000));
    await Promise.all(calls);
    expect(sink.batches).toHaveLength(1);
    expect(ids(sink.batches[0])).toEqual(Array.from({ length: 20 }, (_, i) => `r${i}`));
  });

  it('keeps one write in flight at a time and fills the next batch meanwhile', async () => {
    const sink = new FakeSink('manual');
    const batcher = new MicroBatcher(sink, options({ lingerMs: 0 }));
    const first = batcher.publish([rec('a')], 1000);
    await tick();
    expect(sink.batches).toHaveLength(1);
    const rest = [batcher.publish([rec('b')], 1000), batcher.publish([rec('c')], 1000), batcher.publish([rec('d')], 1000)];
    await tick();
    expect(sink.batches).toHaveLength(1); // b, c, d wait for a's write
    expect(batcher.queued).toBe(3);
    sink.ack();
    await first;
    await tick();
    expect(sink.batches.map(ids)).toEqual([['a'], ['b', 'c', 'd']]);
    sink.ack();
    await Promise.all(rest);
    expect(sink.maxInFlight).toBe(1);
  });

  it('cuts batches at maxRecords and at maxBytes', async () => {
    const byCount = new FakeSink();
    const a = new MicroBatcher(byCount, options({ maxRecords: 5, lingerMs: 1 }));
    await Promise.all(Array.from({ length: 12 }, (_, i) => a.publish([rec(`r${i}`)], 1000)));
    expect(byCount.batches.map((b) => b.length)).toEqual([5, 5, 2]);

    const bySize = new FakeSink();
    expect(recordBytes(rec('s0', 300))).toBe(311); // 3 fit in 1024 bytes, 4 do not
    const b = new MicroBatcher(bySize, options({ maxBytes: 1024, lingerMs: 1 }));
    await Promise.all(Array.from({ length: 7 }, (_, i) => b.publish([rec(`s${i}`, 300)], 1000)));
    expect(bySize.batches.map((batch) => batch.length)).toEqual([3, 3, 1]);
  });

  it('sends a single record larger than maxBytes alone rather than never', async () => {
    const sink = new FakeSink();
    const batcher = new MicroBatcher(sink, options({ maxBytes: 1024, maxRecordBytes: 5000, lingerMs: 1 }));
    await Promise.all([batcher.publish([rec('big', 2000)], 1000), batcher.publish([rec('small')], 1000)]);
    expect(sink.batches.map(ids)).toEqual([['big'], ['small']]);
  });

  it('a call with several records resolves only when all of them are acknowledged', async () => {
    const sink = new FakeSink('manual');
    const batcher = new MicroBatcher(sink, options({ maxRecords: 2, lingerMs: 0 }));
    const call = batcher.publish([rec('a'), rec('b'), rec('c')], 1000);
    await tick();
    expect(sink.batches.map(ids)).toEqual([['a', 'b']]);
    sink.ack();
    await tick();
    expect(await state(call)).toBe('pending');
    expect(sink.batches.map(ids)).toEqual([['a', 'b'], ['c']]);
    sink.ack();
    expect(await state(call)).toBe('resolved');
  });

  it('fails a call on its own deadline with reason timeout', async () => {
    const sink = new FakeSink('manual');
    const batcher = new MicroBatcher(sink, options({ lingerMs: 0 }));
    const slow = batcher.publish([rec('a')], 30);
    expect(await reasonOf(slow)).toBe('timeout');
    sink.ack(); // a late acknowledgement changes nothing
    await tick();
  });

  it('does not send a timed-out call\'s records that were still queued', async () => {
    const sink = new FakeSink('manual');
    const batcher = new MicroBatcher(sink, options({ lingerMs: 0 }));
    const first = batcher.publish([rec('a')], 5000);
    await tick();
    const late = batcher.publish([rec('b'), rec('b2')], 30);
    const kept = batcher.publish([rec('c')], 5000);
    expect(await reasonOf(late)).toBe('timeout');
    expect(batcher.queued).toBe(1);
    sink.ack();
    await first;
    await tick();
    sink.ack();
    await kept;
    await batcher.flush();
    expect(sink.batches.map(ids)).toEqual([['a'], ['c']]);
  });

  it('refuses with queue_full past queueMax, without queueing anything of the call', async () => {
    const sink = new FakeSink();
    const batcher = new MicroBatcher(sink, options({ queueMax: 3, lingerMs: 1000 }));
    const accepted = [batcher.publish([rec('a'), rec('b')], 5000), batcher.publish([rec('c')], 5000)];
    expect(await reasonOf(batcher.publish([rec('d')], 5000))).toBe('queue_full');
    expect(await reasonOf(batcher.publish([rec('e'), rec('f')], 5000))).toBe('queue_full');
    expect(batcher.queued).toBe(3);
    await batcher.flush();
    await Promise.all(accepted);
    expect(sink.batches.flat().map((r) => r.headers.ce_id)).toEqual(['a', 'b', 'c']);
  });

  it('refuses with too_large a call with any record over maxRecordBytes, sending none of it', async () => {
    const sink = new FakeSink();
    const batcher = new MicroBatcher(sink, options({ maxRecordBytes: 100 }));
    const overhead = recordBytes(rec('fits', 0)) - 'fits'.length; // key and headers
    const limit = rec('fits', 100 - overhead);
    expect(recordBytes(limit)).toBe(100);
    expect(await reasonOf(batcher.publish([rec('ok'), rec('huge', 200)], 1000))).toBe('too_large');
    await batcher.publish([limit], 1000);
    expect(sink.batches.map(ids)).toEqual([['fits']]);
  });

  it('counts multi-byte characters and headers in the record size', () => {
    const ascii: OutRecord = { topic: 't', key: 'k', headers: { h: 'v' }, value: 'ab' };
    expect(recordBytes(ascii)).toBe(2 + 1 + 1 + 1);
    expect(recordBytes({ ...ascii, value: 'é€' })).toBe(5 + 1 + 1 + 1);
  });

  it('rejects every call of a failed batch with unavailable; a PublishError from the sink keeps its reason', async () => {
    const failing = new MicroBatcher(new FakeSink(new Error('broker gone')), options());
    const calls = [failing.publish([rec('a')], 1000), failing.publish([rec('b')], 1000)];
    expect(await Promise.all(calls.map(reasonOf))).toEqual(['unavailable', 'unavailable']);

    const tooLarge = new MicroBatcher(new FakeSink(new PublishError('too_large', 'MESSAGE_TOO_LARGE')), options());
    expect(await reasonOf(tooLarge.publish([rec('a')], 1000))).toBe('too_large');
  });

  it('goes on after a failed batch', async () => {
    const sink = new FakeSink('manual');
    const batcher = new MicroBatcher(sink, options({ lingerMs: 0 }));
    const first = batcher.publish([rec('a')], 1000);
    await tick();
    const second = batcher.publish([rec('b')], 1000);
    sink.fail(new Error('blip'));
    expect(await reasonOf(first)).toBe('unavailable');
    await tick();
    sink.ack();
    await second;
    expect(sink.batches.map(ids)).toEqual([['a'], ['b']]);
  });

  it('reports each batch to the observer', async () => {
    const seen: Array<[number, number, boolean]> = [];
    const observer = { batchWritten: (records: number, bytes: number, _ms: number, ok: boolean) => seen.push([records, bytes, ok]) };
    const good = new MicroBatcher(new FakeSink(), options(), observer);
    await Promise.all([good.publish([rec('a')], 1000), good.publish([rec('b')], 1000)]);
    const bad = new MicroBatcher(new FakeSink(new Error('x')), options(), observer);
    await bad.publish([rec('c')], 1000).catch(() => undefined);
    expect(seen).toEqual([
      [2, recordBytes(rec('a')) + recordBytes(rec('b')), true],
      [1, recordBytes(rec('c')), false],
    ]);
  });

  it('resolves an empty call at once without writing', async () => {
    const sink = new FakeSink();
    await new MicroBatcher(sink, options()).publish([], 1000);
    expect(sink.batches).toHaveLength(0);
  });

  it('flush() sends what is queued without waiting for the linger time', async () => {
    const sink = new FakeSink();
    const batcher = new MicroBatcher(sink, options({ lingerMs: 1000 }));
    const call = batcher.publish([rec('a')], 5000);
    expect(await state(call)).toBe('pending');
    expect(sink.batches).toHaveLength(0);
    await batcher.flush();
    expect(await state(call)).toBe('resolved');
    expect(sink.batches.map(ids)).toEqual([['a']]);
    await batcher.flush(); // nothing left: returns at once
  });

  it('close() refuses new calls with closed and flushes what is queued and in flight', async () => {
    const sink = new FakeSink('manual');
    const batcher = new MicroBatcher(sink, options({ lingerMs: 0 }));
    const inFlight = batcher.publish([rec('a')], 5000);
    await tick();
    const queued = batcher.publish([rec('b')], 5000);
    const closing = batcher.close();
    expect(await reasonOf(batcher.publish([rec('c')], 5000))).toBe('closed');
    expect(await state(closing)).toBe('pending');
    sink.ack();
    await tick();
    sink.ack();
    await closing;
    await Promise.all([inFlight, queued]);
    expect(sink.batches.map(ids)).toEqual([['a'], ['b']]);
    await batcher.close(); // safe twice
  });
});

describe('a sink write that never settles', () => {
  it('counts as failed after writeTimeoutMs, so later batches are written', async () => {
    const sink = new FakeSink('manual');
    const batcher = new MicroBatcher(sink, options({ lingerMs: 0, writeTimeoutMs: 50 }));
    const hung = batcher.publish([rec('hung')], 1000);
    await expect(hung).rejects.toMatchObject({ reason: 'timeout' });
    const after = batcher.publish([rec('after')], 1000);
    await tick();
    expect(sink.pending).toHaveLength(2);
    sink.pending[1].resolve();
    await expect(after).resolves.toBeUndefined();
    expect(sink.batches.map(ids)).toEqual([['hung'], ['after']]);
  });
});
