import { MicroBatcher, recordBytes, type BatcherOptions } from '../../src/publish/batcher';
import { batcherOptions } from '../../src/container';
import { loadConfig } from '../../src/config/load';
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

/**
 * Lets pending promise callbacks run, and a batch the batcher scheduled for the end of this
 * turn of the event loop (setImmediate) go: an immediate queued from the callbacks of the first
 * runs in the next turn, after the batcher's.
 */
const tick = () => new Promise((resolve) => setImmediate(() => setImmediate(resolve)));

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

/** A batcher with no linger on a sink answered by hand: `a` in its one write, `b` published behind it. */
async function oneWriteAndOneQueued(timeoutMs: number) {
  const sink = new FakeSink('manual');
  const batcher = new MicroBatcher(sink, options({ lingerMs: 0 }));
  const inFlight = batcher.publish([rec('a')], timeoutMs);
  await tick();
  const queued = batcher.publish([rec('b')], timeoutMs);
  return { sink, batcher, inFlight, queued };
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
    // The linger runs from the first call: 20 calls made in one synchronous loop must all fall
    // inside it even while the CPU is busy and the batcher's code is still cold (5 ms did not).
    const batcher = new MicroBatcher(sink, options({ lingerMs: 250 }));
    const calls = Array.from({ length: 20 }, (_, i) => batcher.publish([rec(`r${i}`)], 5000));
    await Promise.all(calls);
    expect(sink.batches).toHaveLength(1);
    expect(ids(sink.batches[0])).toEqual(Array.from({ length: 20 }, (_, i) => `r${i}`));
  });

  it('with no linger, sends what was published in one turn of the event loop as one batch', async () => {
    const sink = new FakeSink('manual');
    const batcher = new MicroBatcher(sink, options({ lingerMs: 0 }));
    const calls = Array.from({ length: 5 }, (_, i) => batcher.publish([rec(`r${i}`)], 1000));
    await tick();
    expect(sink.batches.map(ids)).toEqual([['r0', 'r1', 'r2', 'r3', 'r4']]);
    sink.ack();
    await Promise.all(calls);
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

  it('hands the next batch to the sink as soon as a write is answered, before that write\'s callers resume', async () => {
    const { sink, inFlight, queued } = await oneWriteAndOneQueued(1000);
    await tick();
    const batchesWhenFirstResumed = inFlight.then(() => sink.batches.map(ids));
    sink.ack();
    // Not at the end of the turn: the next write runs while the first one's callers answer.
    expect(await batchesWhenFirstResumed).toEqual([['a'], ['b']]);
    sink.ack();
    await queued;
    expect(sink.maxInFlight).toBe(1);
  });

  it('cuts batches at maxRecords and at maxBytes', async () => {
    // A linger far longer than the test: only the bounds cut batches, however slow the machine
    // (with 1 ms, a busy CPU let the linger end between two synchronous calls); flush sends the rest.
    const byCount = new FakeSink();
    const a = new MicroBatcher(byCount, options({ maxRecords: 5, lingerMs: 60_000 }));
    const countCalls = Array.from({ length: 12 }, (_, i) => a.publish([rec(`r${i}`)], 120_000));
    await a.flush();
    await Promise.all(countCalls);
    expect(byCount.batches.map((b) => b.length)).toEqual([5, 5, 2]);

    const bySize = new FakeSink();
    expect(recordBytes(rec('s0', 300))).toBe(311); // 3 fit in 1024 bytes, 4 do not
    const b = new MicroBatcher(bySize, options({ maxBytes: 1024, lingerMs: 60_000 }));
    const sizeCalls = Array.from({ length: 7 }, (_, i) => b.publish([rec(`s${i}`, 300)], 120_000));
    await b.flush();
    await Promise.all(sizeCalls);
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

  it('rejects every call of a failed batch with the PublishError the sink threw', async () => {
    const failing = new MicroBatcher(new FakeSink(new PublishError('unavailable', 'broker gone')), options());
    const calls = [failing.publish([rec('a')], 1000), failing.publish([rec('b')], 1000)];
    expect(await Promise.all(calls.map(reasonOf))).toEqual(['unavailable', 'unavailable']);

    const tooLarge = new MicroBatcher(new FakeSink(new PublishError('too_large', 'MESSAGE_TOO_LARGE')), options());
    expect(await reasonOf(tooLarge.publish([rec('a')], 1000))).toBe('too_large');
  });

  it('a bug in the sink (a TypeError) reaches the callers as it is, never as a PublishError ("retry later")', async () => {
    const bug = new TypeError("Cannot read properties of undefined (reading 'topic')");
    const batcher = new MicroBatcher(new FakeSink(bug), options());
    const calls = [batcher.publish([rec('a')], 1000), batcher.publish([rec('b')], 1000)];
    for (const call of calls) await expect(call).rejects.toBe(bug);
    // And the batcher goes on.
    const sink = new FakeSink();
    const next = new MicroBatcher(sink, options());
    await next.publish([rec('c')], 1000);
    expect(sink.batches.map(ids)).toEqual([['c']]);
  });

  it('a sink whose write throws at once (not a rejected promise) fails that batch, and the same batcher goes on', async () => {
    const bug = new TypeError('thrown before any promise');
    let throwing = true;
    const written: OutRecord[][] = [];
    const sink: Sink = {
      name: 'throws-at-once',
      start: async () => undefined,
      ping: async () => undefined,
      close: async () => undefined,
      write: (records) => {
        if (throwing) throw bug;
        written.push(records);
        return Promise.resolve();
      },
    };
    const batcher = new MicroBatcher(sink, options({ lingerMs: 0 }));
    await expect(batcher.publish([rec('a')], 1000)).rejects.toBe(bug);
    throwing = false;
    await batcher.publish([rec('b')], 1000);
    expect(written.map(ids)).toEqual([['b']]);
  });

  it('goes on after a failed batch', async () => {
    const { sink, inFlight, queued } = await oneWriteAndOneQueued(1000);
    sink.fail(new PublishError('unavailable', 'blip'));
    expect(await reasonOf(inFlight)).toBe('unavailable');
    await tick();
    sink.ack();
    await queued;
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
    const { sink, batcher, inFlight, queued } = await oneWriteAndOneQueued(5000);
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

describe('lingering', () => {
  // Fake clock (timers and performance.now); setImmediate stays real for tick().
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick'] }));
  afterEach(() => jest.useRealTimers());

  it('records queued while a write was under way go as soon as it ends: the linger timer does not start again', async () => {
    const sink = new FakeSink('manual');
    const batcher = new MicroBatcher(sink, options({ lingerMs: 50 }));
    const a = batcher.publish([rec('a')], 10_000);
    jest.advanceTimersByTime(50);
    await tick();
    expect(sink.batches.map(ids)).toEqual([['a']]);
    const b = batcher.publish([rec('b')], 10_000);
    jest.advanceTimersByTime(60); // b has lingered its 50 ms while a's write was under way
    sink.ack();
    await a;
    await tick();
    expect(sink.batches.map(ids)).toEqual([['a'], ['b']]);
    sink.ack();
    await b;
  });

  it('a record that arrived just before the write ended waits only the rest of its own linger', async () => {
    const sink = new FakeSink('manual');
    const batcher = new MicroBatcher(sink, options({ lingerMs: 50 }));
    const a = batcher.publish([rec('a')], 10_000);
    jest.advanceTimersByTime(50);
    await tick();
    jest.advanceTimersByTime(20);
    const b = batcher.publish([rec('b')], 10_000); // 30 ms of its linger left when a's write ends
    jest.advanceTimersByTime(20);
    sink.ack();
    await a;
    await tick();
    jest.advanceTimersByTime(29);
    await tick();
    expect(sink.batches).toHaveLength(1);
    jest.advanceTimersByTime(1);
    await tick();
    expect(sink.batches.map(ids)).toEqual([['a'], ['b']]);
    sink.ack();
    await b;
  });
});

describe('many calls timing out while queued', () => {
  it('10,000 queued calls that time out all settle promptly, and none of their records is sent', async () => {
    const sink = new FakeSink('manual');
    const batcher = new MicroBatcher(sink, options({ maxRecords: 1, lingerMs: 0, queueMax: 20_000 }));
    const first = batcher.publish([rec('in-flight')], 60_000);
    await tick();
    // CPU time of this process, not wall time: other work on the machine does not count.
    const started = process.cpuUsage();
    const calls = Array.from({ length: 10_000 }, (_, i) => batcher.publish([rec(`q${i}`)], 20));
    const reasons = await Promise.all(calls.map(reasonOf));
    const used = process.cpuUsage(started);
    const cpuMs = (used.user + used.system) / 1000;
    // Each drop used to filter the whole queue: 10,000 drops took 17-29 s; now about half a second.
    console.log(`10,000 timed-out calls: ${Math.round(cpuMs)} ms of CPU`);
    expect(cpuMs).toBeLessThan(5000);
    expect(new Set(reasons)).toEqual(new Set(['timeout']));
    expect(batcher.queued).toBe(0);
    const after = batcher.publish([rec('after')], 60_000);
    sink.ack();
    await first;
    await tick();
    sink.ack();
    await after;
    expect(sink.batches.map(ids)).toEqual([['in-flight'], ['after']]);
  }, 60_000);

  it('a call larger than one batch that times out: its queued records are dropped, the queue count stays right', async () => {
    const sink = new FakeSink('manual');
    const batcher = new MicroBatcher(sink, options({ maxRecords: 2, lingerMs: 0, queueMax: 5 }));
    const big = batcher.publish([rec('a'), rec('b'), rec('c'), rec('d')], 30);
    await tick();
    expect(batcher.queued).toBe(2); // a, b in flight
    expect(await reasonOf(big)).toBe('timeout');
    expect(batcher.queued).toBe(0);
    // Room for five again.
    const next = batcher.publish([rec('e'), rec('f'), rec('g'), rec('h'), rec('i')], 10_000);
    sink.ack();
    await tick();
    expect(sink.batches.map(ids)).toEqual([['a', 'b'], ['e', 'f']]);
    sink.ack();
    await tick();
    sink.ack();
    await tick();
    sink.ack();
    await next;
  });
});

describe('a sink that is not ready to send (its broker stopped answering)', () => {
  /** A sink whose ready() the test settles by hand. */
  class GatedSink extends FakeSink {
    gate?: { resolve: () => void; reject: (e: Error) => void };
    readyCalls = 0;
    ready(): Promise<void> {
      this.readyCalls++;
      return new Promise((resolve, reject) => (this.gate = { resolve, reject }));
    }
  }

  it('holds the records in the queue: those whose senders gave up meanwhile are never sent', async () => {
    const sink = new GatedSink();
    const batcher = new MicroBatcher(sink, options({ lingerMs: 0 }));
    const gaveUp = batcher.publish([rec('late')], 30);
    const waiting = batcher.publish([rec('kept')], 60_000);
    expect(await reasonOf(gaveUp)).toBe('timeout');
    expect(sink.batches).toHaveLength(0);
    sink.gate!.resolve();
    await waiting;
    expect(sink.batches.map(ids)).toEqual([['kept']]);
  });

  it('fails the next batch unsent with the PublishError ready() gives', async () => {
    const sink = new GatedSink();
    const batcher = new MicroBatcher(sink, options({ lingerMs: 0 }));
    const call = batcher.publish([rec('a')], 60_000);
    await tick();
    sink.gate!.reject(new PublishError('unavailable', 'kafka: no answer'));
    expect(await reasonOf(call)).toBe('unavailable');
    expect(sink.batches).toHaveLength(0);
    expect(batcher.queued).toBe(0);
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

describe('BATCH_LINGER_MS', () => {
  const lingerOf = (env: NodeJS.ProcessEnv) => {
    const result = loadConfig(env);
    if (!result.ok) throw new Error(result.problems.join('; '));
    return batcherOptions(result.config).lingerMs;
  };

  it('defaults to 0 with Kafka and with the file sink; a value set wins', () => {
    expect(lingerOf({ KAFKA_BROKERS: 'kafka:9092' })).toBe(0);
    expect(lingerOf({})).toBe(0);
    expect(lingerOf({ KAFKA_BROKERS: 'kafka:9092', BATCH_LINGER_MS: '7' })).toBe(7);
    expect(lingerOf({ BATCH_LINGER_MS: '5' })).toBe(5);
  });
});

describe('whether a failed call\'s records may still reach the sink (sinkMayHold)', () => {
  it('is true for a call that timed out while its record was in a write not yet answered', async () => {
    const sink = new FakeSink('manual');
    const batcher = new MicroBatcher(sink, options({ lingerMs: 0 }));
    const handed = batcher.publish([rec('a')], 30);
    await expect(handed).rejects.toMatchObject({ reason: 'timeout', sinkMayHold: true });
    expect(sink.batches.map(ids)).toEqual([['a']]);
    sink.ack(); // the sink takes it after all: the event exists although the caller failed
    await batcher.flush();
  });

  it('is true for a write that outlived writeTimeoutMs', async () => {
    const sink = new FakeSink('manual');
    const batcher = new MicroBatcher(sink, options({ lingerMs: 0, writeTimeoutMs: 30 }));
    await expect(batcher.publish([rec('hung')], 5000)).rejects.toMatchObject({ reason: 'timeout', sinkMayHold: true });
    sink.ack();
  });

  it('is false for a call that timed out while still queued, and for a write the sink refused', async () => {
    const sink = new FakeSink('manual');
    const batcher = new MicroBatcher(sink, options({ lingerMs: 0 }));
    const first = batcher.publish([rec('a')], 5000);
    await tick();
    const queued = batcher.publish([rec('b')], 30);
    await expect(queued).rejects.toMatchObject({ reason: 'timeout', sinkMayHold: false });
    sink.fail(new PublishError('unavailable', 'refused'));
    await expect(first).rejects.toMatchObject({ reason: 'unavailable', sinkMayHold: false });
    expect(sink.batches.map(ids)).toEqual([['a']]);
  });
});
