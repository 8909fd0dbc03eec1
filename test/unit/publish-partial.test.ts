/**
 * A record refused alone while the rest of its batch is written: the batcher's handling of a
 * PartialWriteError, and the Kafka sink splitting a request the broker refused as too large.
 * librdkafka's mock broker accepts records of any size, so kafkajs is replaced here by a fake
 * whose "broker" refuses any request holding a record over a size limit, the way Kafka does
 * (MESSAGE_TOO_LARGE for the whole request, wrapped by kafkajs' retrier).
 */
import pino from 'pino';
import { MicroBatcher, type BatcherOptions } from '../../src/publish/batcher';
import { PublishError } from '../../src/publish/errors';
import { KafkaSink } from '../../src/publish/kafka';
import { PartialWriteError, type OutRecord, type Sink } from '../../src/publish/sink';

interface MockMessage {
  topic: string;
  key: string;
  value: string;
}

/** The fake cluster: what was written, every request, and how to make it misbehave. */
const mockCluster = {
  /** Largest record value accepted. */
  limit: 100,
  /** Largest request accepted (Kafka's message.max.bytes applies to a whole record batch). */
  requestLimit: Infinity,
  written: [] as MockMessage[],
  requests: [] as MockMessage[][],
  producers: 0,
  /** Fails the n-th request (from 1) with this error, whatever it holds. */
  failAt: new Map<number, Error>(),
  reset() {
    this.limit = 100;
    this.requestLimit = Infinity;
    this.written = [];
    this.requests = [];
    this.producers = 0;
    this.failAt = new Map();
  },
};

jest.mock('kafkajs', () => {
  const actual = jest.requireActual('kafkajs');
  const { createErrorFromCode } = jest.requireActual('kafkajs/src/protocol/error');
  class MockProducer {
    readonly events = { REQUEST: 'producer.network.request' };
    on() {
      return () => undefined;
    }
    async connect() {}
    async disconnect() {}
    async sendBatch({ topicMessages }: { topicMessages: { topic: string; messages: { key: string; value: string }[] }[] }) {
      const messages = topicMessages.flatMap((t) => t.messages.map((m) => ({ topic: t.topic, key: m.key, value: m.value })));
      mockCluster.requests.push(messages);
      const fail = mockCluster.failAt.get(mockCluster.requests.length);
      if (fail) throw fail;
      const total = messages.reduce((sum, m) => sum + Buffer.byteLength(m.value), 0);
      if (messages.some((m) => Buffer.byteLength(m.value) > mockCluster.limit) || total > mockCluster.requestLimit) {
        const protocol = createErrorFromCode(10); // MESSAGE_TOO_LARGE, not retriable
        throw new actual.KafkaJSNonRetriableError(protocol, { cause: protocol });
      }
      mockCluster.written.push(...messages);
    }
  }
  class MockKafka {
    producer() {
      mockCluster.producers++;
      return new MockProducer();
    }
    admin() {
      return { connect: async () => undefined, disconnect: async () => undefined, describeCluster: async () => ({ brokers: [{}] }) };
    }
  }
  return { ...actual, Kafka: MockKafka };
});

const quiet = pino({ level: 'silent' });

const rec = (id: string, size = 10): OutRecord => ({
  topic: 't',
  key: `k-${id}`,
  headers: { ce_id: id },
  value: id.padEnd(size, '.'),
});

async function reasonOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(PublishError);
    return (error as PublishError).reason;
  }
  return 'resolved';
}

const options = (overrides: Partial<BatcherOptions> = {}): BatcherOptions => ({
  maxRecords: 100,
  maxBytes: 1024 * 1024,
  lingerMs: 5,
  queueMax: 1000,
  maxRecordBytes: 1_000_000,
  ...overrides,
});

/** A sink that fails the records whose ce_id is listed, alone, and acknowledges the rest. */
class PickySink implements Sink {
  readonly name = 'picky';
  readonly batches: string[][] = [];
  constructor(private readonly refused: Set<string>) {}
  async start(): Promise<void> {}
  async ping(): Promise<void> {}
  async close(): Promise<void> {}
  async write(records: OutRecord[]): Promise<void> {
    this.batches.push(records.map((r) => r.headers.ce_id));
    const failures = new Map<number, PublishError>();
    records.forEach((r, i) => {
      if (this.refused.has(r.headers.ce_id)) failures.set(i, new PublishError('too_large', 'refused'));
    });
    if (failures.size > 0) throw new PartialWriteError(failures);
  }
}

describe('MicroBatcher with a sink that refuses single records', () => {
  it('fails only the calls whose records were refused; the others of the batch resolve', async () => {
    const sink = new PickySink(new Set(['b', 'd2']));
    const batcher = new MicroBatcher(sink, options());
    const reasons = await Promise.all([
      reasonOf(batcher.publish([rec('a')], 1000)),
      reasonOf(batcher.publish([rec('b')], 1000)),
      reasonOf(batcher.publish([rec('c')], 1000)),
      reasonOf(batcher.publish([rec('d1'), rec('d2')], 1000)),
    ]);
    expect(reasons).toEqual(['resolved', 'too_large', 'resolved', 'too_large']);
    expect(sink.batches).toEqual([['a', 'b', 'c', 'd1', 'd2']]);
  });

  it('does not send the rest of a call that failed in an earlier batch', async () => {
    const sink = new PickySink(new Set(['x1']));
    const batcher = new MicroBatcher(sink, options({ maxRecords: 2 }));
    const big = batcher.publish([rec('x1'), rec('x2'), rec('x3'), rec('x4')], 1000);
    const other = batcher.publish([rec('y')], 1000);
    expect(await reasonOf(big)).toBe('too_large');
    await other;
    await batcher.flush();
    expect(sink.batches).toEqual([['x1', 'x2'], ['y']]);
  });

  it('after a failed batch, the queued rest of its calls is dropped too', async () => {
    let writes = 0;
    const sink: Sink = {
      name: 'flaky',
      start: async () => undefined,
      ping: async () => undefined,
      close: async () => undefined,
      write: async (records) => {
        writes++;
        if (records.some((r) => r.headers.ce_id === 'p1')) throw new PublishError('unavailable', 'broker blip');
      },
    };
    const batcher = new MicroBatcher(sink, options({ maxRecords: 2 }));
    const call = batcher.publish([rec('p1'), rec('p2'), rec('p3')], 1000);
    expect(await reasonOf(call)).toBe('unavailable');
    await batcher.flush();
    expect(writes).toBe(1);
    expect(batcher.queued).toBe(0);
  });
});

describe('KafkaSink: a request refused as too large', () => {
  beforeEach(() => mockCluster.reset());

  async function sink(idempotent: boolean): Promise<KafkaSink> {
    const s = new KafkaSink({ brokers: ['fake:9092'], clientId: 'unit', idempotent, compression: 'none' }, { logger: quiet });
    await s.start();
    await s.ping();
    return s;
  }

  it.each([false, true])('idempotent=%s: is split until the record at fault fails alone; the rest is written in order', async (idempotent) => {
    const s = await sink(idempotent);
    const records = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((id) => rec(id, id === 'f' ? 500 : 10));
    let error: unknown;
    await s.write(records).catch((e: unknown) => (error = e));
    expect(error).toBeInstanceOf(PartialWriteError);
    const failures = (error as PartialWriteError).failures;
    expect([...failures.keys()]).toEqual([5]);
    expect(failures.get(5)).toMatchObject({ name: 'PublishError', reason: 'too_large' });
    expect(mockCluster.written.map((m) => m.value[0])).toEqual(['a', 'b', 'c', 'd', 'e', 'g', 'h']);
    // abcdefgh ✗ → abcd ✓, efgh ✗ → ef ✗ → e ✓, f ✗; gh ✓
    expect(mockCluster.requests.map((r) => r.map((m) => m.value[0]).join(''))).toEqual([
      'abcdefgh',
      'abcd',
      'efgh',
      'ef',
      'e',
      'f',
      'gh',
    ]);
    // An idempotent producer is replaced after each of the 4 failed requests (kafkajs rolled
    // its sequence numbers back though the broker may have written part of the request).
    expect(mockCluster.producers).toBe(idempotent ? 1 + 4 : 1);
    await s.close();
  });

  it('a request over a broker limit below maxRequestBytes, of records that each fit, is written in smaller requests', async () => {
    const s = await sink(true);
    mockCluster.requestLimit = 50; // e.g. a topic's max.message.bytes below the sink's 1 MB requests
    const records = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'].map((id) => rec(id, 20));
    await expect(s.write(records)).resolves.toBeUndefined();
    expect(mockCluster.written.map((m) => m.value[0]).join('')).toBe('abcdefghij');
    // 10 ✗ → 5 ✗ → 3 ✗ → 2 ✓ 1 ✓, 2 ✓; 5 ✗ → 3 ✗ → 2 ✓ 1 ✓, 2 ✓ (no record failed alone)
    expect(mockCluster.requests.map((r) => r.length)).toEqual([10, 5, 3, 2, 1, 2, 5, 3, 2, 1, 2]);
    await s.close();
  });

  it('a single record refused is a plain too_large failure of that record', async () => {
    const s = await sink(false);
    await expect(s.write([rec('big', 500)])).rejects.toMatchObject({ name: 'PartialWriteError' });
    expect(mockCluster.requests).toHaveLength(1);
    await s.close();
  });

  it('another failure while splitting fails the whole write as retryable', async () => {
    const s = await sink(false);
    const records = ['a', 'b', 'c', 'd'].map((id) => rec(id, id === 'a' ? 500 : 10));
    // The first request is refused as too large; its first half then meets a dead connection.
    const { KafkaJSConnectionError } = jest.requireActual('kafkajs');
    mockCluster.failAt.set(2, new KafkaJSConnectionError('Connection error'));
    const write = s.write(records);
    await expect(write).rejects.toMatchObject({ name: 'PublishError', reason: 'unavailable' });
    expect(mockCluster.written).toEqual([]);
    await s.close();
  });

  it('a failure after part of the write was acknowledged fails only the records not written', async () => {
    const s = await sink(false);
    const records = ['a', 'b', 'c', 'd'].map((id) => rec(id, id === 'c' ? 500 : 10));
    // abcd ✗ too large → ab ✓, cd ✗ too large → c ✗ too large, d meets a dead connection.
    const { KafkaJSConnectionError } = jest.requireActual('kafkajs');
    mockCluster.failAt.set(5, new KafkaJSConnectionError('Connection error'));
    let error: unknown;
    await s.write(records).catch((e: unknown) => (error = e));
    expect(error).toBeInstanceOf(PartialWriteError);
    const failures = (error as PartialWriteError).failures;
    expect([...failures.keys()]).toEqual([2, 3]);
    expect(failures.get(2)).toMatchObject({ reason: 'too_large' });
    expect(failures.get(3)).toMatchObject({ reason: 'unavailable' });
    expect(mockCluster.written.map((m) => m.value[0])).toEqual(['a', 'b']);
    await s.close();
  });

  it('a later request of a write larger than one request failing leaves the earlier ones acknowledged', async () => {
    const s = new KafkaSink(
      {
        brokers: ['fake:9092'],
        clientId: 'unit',
        idempotent: false,
        compression: 'none',
        maxRequestBytes: 250, // two records of ~120 bytes (with the allowance) per request
      },
      { logger: quiet },
    );
    await s.start();
    const { KafkaJSConnectionError } = jest.requireActual('kafkajs');
    mockCluster.failAt.set(2, new KafkaJSConnectionError('Connection error'));
    let error: unknown;
    await s.write(['a', 'b', 'c', 'd', 'e'].map((id) => rec(id))).catch((e: unknown) => (error = e));
    expect(mockCluster.requests.map((r) => r.length)).toEqual([2, 2]);
    expect(error).toBeInstanceOf(PartialWriteError);
    expect([...(error as PartialWriteError).failures.keys()]).toEqual([2, 3, 4]);
    expect(mockCluster.written.map((m) => m.value[0])).toEqual(['a', 'b']);
    await s.close();
  });

  it('through the batcher: the oversize record\'s caller gets too_large (413), the others are acknowledged', async () => {
    const s = await sink(true);
    const batcher = new MicroBatcher(s, options());
    const reasons = await Promise.all(
      ['a', 'b', 'c', 'd', 'e'].map((id) => reasonOf(batcher.publish([rec(id, id === 'c' ? 500 : 10)], 5000))),
    );
    expect(reasons).toEqual(['resolved', 'resolved', 'too_large', 'resolved', 'resolved']);
    expect(mockCluster.written.map((m) => m.value[0])).toEqual(['a', 'b', 'd', 'e']);
    await batcher.close();
    await s.close();
  });
});
