/**
 * KafkaSink behind the MicroBatcher, against librdkafka's mock cluster (started through kcat)
 * over TCP: batching, a stalled broker, a dead broker, no broker at start and one that
 * appears later; then, through a fault-injecting proxy in front of the mock, missing and
 * forbidden topics and a leader move. Each test has its own mock broker.
 */
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { MicroBatcher, type BatcherOptions } from '../../src/publish/batcher';
import { PublishError } from '../../src/publish/errors';
import { KafkaSink, type KafkaSettings, type KafkaSinkDeps } from '../../src/publish/kafka';
import { PartialWriteError, type OutRecord } from '../../src/publish/sink';
import { kafkaTiming } from '../../src/publish/timing';
import { KAFKA_ERROR, startKafkaFaultProxy, type FaultProxyOptions, type KafkaFaultProxy } from '../helpers/kafka-fault-proxy';
import { startKafkaMock, type KafkaMock } from '../helpers/kafka-mock';
import { reservePort } from '../helpers/ports';

const BATCHER: BatcherOptions = {
  maxRecords: 500,
  maxBytes: 4 * 1024 * 1024,
  lingerMs: 2,
  queueMax: 10_000,
  maxRecordBytes: 1_000_000,
};
/**
 * When a wait gives up (not a deadline the sink must meet): the checks here are of what
 * happened, not how long it took, which on a busy machine says little (the bench measures it).
 */
const GIVE_UP_MS = 60_000;
jest.setTimeout(4 * GIVE_UP_MS);

const quiet = pino({ level: 'silent' });

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanup.length > 0) await cleanup.pop()!().catch(() => undefined);
});

function sinkFor(brokers: string, extra: Partial<KafkaSettings> = {}, deps: Partial<KafkaSinkDeps> = {}): KafkaSink {
  const settings: KafkaSettings = {
    brokers: [brokers],
    clientId: 'kafka-sink-test',
    idempotent: false, // the mock cannot hand kafkajs a producer id (see kafka-mock.ts)
    compression: 'none',
    ...extra,
  };
  const sink = new KafkaSink(settings, { logger: quiet, ...deps });
  cleanup.push(() => sink.close());
  return sink;
}

async function mockWith(topics: string[], port?: number): Promise<KafkaMock> {
  const mock = await startKafkaMock({ topics, port });
  cleanup.push(() => mock.stop());
  return mock;
}

function record(topic: string, n: number): OutRecord {
  const id = randomUUID();
  return {
    topic,
    key: `wf-${n % 7}`,
    headers: { 'content-type': 'application/cloudevents+json', ce_type: 'webhook.trigger', ce_id: id },
    value: JSON.stringify({ specversion: '1.0', id, type: 'webhook.trigger', source: '/t', data: { n } }),
  };
}

interface Outcome {
  id: string;
  ok: boolean;
  error?: unknown;
  /** ms from the publish() call until it settled */
  ms: number;
}

function publishTimed(batcher: MicroBatcher, rec: OutRecord, timeoutMs: number): Promise<Outcome> {
  const started = performance.now();
  return batcher.publish([rec], timeoutMs).then(
    () => ({ id: rec.headers.ce_id, ok: true, ms: performance.now() - started }),
    (error: unknown) => ({ id: rec.headers.ce_id, ok: false, error, ms: performance.now() - started }),
  );
}

async function eventually<T>(fn: () => Promise<T>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

function reasonOf(outcome: Outcome): string | undefined {
  return outcome.error instanceof PublishError ? outcome.error.reason : undefined;
}

test('1000 concurrent publishes all arrive, in far fewer Produce requests', async () => {
  const topic = 'it.burst';
  const mock = await mockWith([topic]);
  let produceRequests = 0;
  const sink = sinkFor(mock.brokers, {}, { onProduceRequest: () => produceRequests++ });
  await sink.start();
  await eventually(() => sink.ping(), GIVE_UP_MS);
  const batcher = new MicroBatcher(sink, BATCHER);

  const records = Array.from({ length: 1000 }, (_, n) => record(topic, n));
  const outcomes = await Promise.all(records.map((r) => publishTimed(batcher, r, GIVE_UP_MS)));

  expect(outcomes.filter((o) => !o.ok)).toEqual([]);
  const back = await mock.waitFor(1000, GIVE_UP_MS, topic);
  expect(new Set(back.map((r) => r.headers.ce_id))).toEqual(new Set(records.map((r) => r.headers.ce_id)));
  expect(back).toHaveLength(1000);
  console.log(`Produce requests for 1000 concurrent publishes: ${produceRequests}`);
  expect(produceRequests).toBeGreaterThanOrEqual(1);
  expect(produceRequests).toBeLessThan(100);
});

test('a broker stalled (SIGSTOP) during a burst: every call settles, acknowledged or retryable, nothing acknowledged is lost', async () => {
  const topic = 'it.stall';
  const mock = await mockWith([topic]);
  const sink = sinkFor(mock.brokers);
  await sink.start();
  await eventually(() => sink.ping(), GIVE_UP_MS);
  const batcher = new MicroBatcher(sink, BATCHER);
  const timeoutMs = 1500;
  let n = 0;
  const burst = (count: number) =>
    Array.from({ length: count }, () => publishTimed(batcher, record(topic, n++), timeoutMs));

  const calls: Promise<Outcome>[] = [];
  try {
    // Some go through before the stall, some are in flight or queued when it hits, some come during it.
    const first = burst(100);
    calls.push(...first);
    await Promise.race(first);
    calls.push(...burst(100));
    mock.pause();
    const duringStall = burst(100);
    calls.push(...duringStall);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const later = burst(100);
    calls.push(...later);

    const outcomes = await Promise.all(calls);
    console.log(`stalled broker: slowest call settled after ${Math.round(Math.max(...outcomes.map((o) => o.ms)))} ms (deadline ${timeoutMs} ms)`);
    for (const failed of outcomes.filter((o) => !o.ok)) expect(['timeout', 'unavailable']).toContain(reasonOf(failed));
    // Nothing is acknowledged while the broker is stopped.
    const stalled = await Promise.all([...duringStall, ...later]);
    expect(stalled.filter((o) => o.ok)).toEqual([]);
    const acknowledged = outcomes.filter((o) => o.ok).map((o) => o.id);
    expect(acknowledged.length).toBeGreaterThan(0);
    // More than the ping cache's second has passed since the last good ping: readiness is down.
    await expect(sink.ping()).rejects.toThrow(/^kafka: /);

    mock.resume();
    const back = await mock.waitFor(
      (records) => {
        const ids = new Set(records.map((r) => r.headers.ce_id));
        return acknowledged.every((id) => ids.has(id));
      },
      GIVE_UP_MS,
      topic,
    );
    const ids = new Set(back.map((r) => r.headers.ce_id));
    expect(acknowledged.filter((id) => !ids.has(id))).toEqual([]);

    // And the sink recovers once the broker answers again.
    const after = record(topic, n++);
    await expect(batcher.publish([after], GIVE_UP_MS)).resolves.toBeUndefined();
    await mock.waitFor((records) => records.some((r) => r.headers.ce_id === after.headers.ce_id), GIVE_UP_MS, topic);
  } finally {
    mock.resume();
    await Promise.allSettled(calls);
  }
});

test('a broker that dies: publishes fail as retryable, ping rejects naming kafka', async () => {
  const topic = 'it.dead';
  const mock = await mockWith([topic]);
  const sink = sinkFor(mock.brokers);
  await sink.start();
  await eventually(() => sink.ping(), GIVE_UP_MS);
  const batcher = new MicroBatcher(sink, BATCHER);
  await batcher.publish([record(topic, 0)], 5000);

  await mock.stop();
  const timeoutMs = 1500;
  const outcomes = await Promise.all(
    Array.from({ length: 20 }, (_, n) => publishTimed(batcher, record(topic, n + 1), timeoutMs)),
  );
  expect(outcomes.filter((o) => o.ok)).toEqual([]);
  for (const o of outcomes) expect(['unavailable', 'timeout']).toContain(reasonOf(o));
  console.log(`dead broker: slowest call settled after ${Math.round(Math.max(...outcomes.map((o) => o.ms)))} ms (deadline ${timeoutMs} ms)`);
  // The ping result is cached for about a second; poll until the probe finds no broker.
  const failed = await eventually(() => sink.ping().then(() => Promise.reject(new Error('ping still resolves')), (error: Error) => error), GIVE_UP_MS);
  expect(failed.message).toMatch(/^kafka: /);
});

test('no broker at start: start() resolves, not ready, then recovers when a broker appears on that port', async () => {
  const topic = 'it.late';
  // The broker appears later on this port: reserved, never one the kernel hands to another socket meanwhile.
  const reserved = await reservePort();
  cleanup.push(async () => reserved.release());
  const port = reserved.port;
  const sink = sinkFor(`127.0.0.1:${port}`);

  await sink.start();
  await expect(sink.ping()).rejects.toThrow(/^kafka: not connected/);

  const batcher = new MicroBatcher(sink, BATCHER);
  const refused = await publishTimed(batcher, record(topic, 0), 1500);
  expect(refused.ok).toBe(false);
  expect(reasonOf(refused)).toBe('unavailable');
  expect((refused.error as Error).message).toMatch(/^kafka: not connected/);

  // A fresh broker on the port the sink was configured with.
  const mock = await mockWith([topic], port);
  expect(mock.brokers).toBe(`127.0.0.1:${port}`);
  await eventually(() => sink.ping(), GIVE_UP_MS);

  const rec = record(topic, 1);
  await expect(batcher.publish([rec], 5000)).resolves.toBeUndefined();
  const back = await mock.waitFor(1, GIVE_UP_MS, topic);
  expect(back.map((r) => r.headers.ce_id)).toEqual([rec.headers.ce_id]);
});

test('an idempotent producer that gets no producer id stays not ready and never publishes without idempotence', async () => {
  const topic = 'it.idempotent';
  const mock = await mockWith([topic]);
  const sink = sinkFor(mock.brokers, { idempotent: true });
  await sink.start();

  // kafkajs asks the controller named in Metadata for a producer id; the mock names a broker
  // that does not exist, so the producer never becomes ready.
  await expect(sink.ping()).rejects.toThrow(/^kafka: not connected/);
  await expect(sink.write([record(topic, 0)])).rejects.toMatchObject({ name: 'PublishError', reason: 'unavailable' });

  // A plain producer on the same broker works, and its record is the only one on the topic.
  const plain = sinkFor(mock.brokers);
  await plain.start();
  await eventually(() => plain.ping(), GIVE_UP_MS);
  const rec = record(topic, 1);
  await plain.write([rec]);
  const back = await mock.waitFor(1, GIVE_UP_MS, topic);
  expect(back.map((r) => r.headers.ce_id)).toEqual([rec.headers.ce_id]);
});

test('gzip compression: records read back as written', async () => {
  const topic = 'it.gzip';
  const mock = await mockWith([topic]);
  const sink = sinkFor(mock.brokers, { compression: 'gzip' });
  await sink.start();
  await eventually(() => sink.ping(), GIVE_UP_MS);

  const records = Array.from({ length: 20 }, (_, n) => record(topic, n));
  await sink.write(records);
  const back = await mock.waitFor(20, GIVE_UP_MS, topic);
  const byId = new Map(back.map((r) => [r.headers.ce_id, r]));
  for (const sent of records) {
    expect(byId.get(sent.headers.ce_id)).toMatchObject({ key: sent.key, value: sent.value, headers: sent.headers });
  }
});

/**
 * The largest record a sender can cause (MAX_RECORD_BYTES) through kafkajs's patched encoder
 * (patches/): it is sized to fit and never zero-filled, and its batch's CRC-32C is computed eight
 * bytes a step. The mock's consumer checks each batch's CRC (check.crcs) before it prints a record.
 */
test('records up to the record limit, in multi-byte UTF-8, arrive byte for byte with their headers', async () => {
  const topic = 'it.large';
  const mock = await mockWith([topic]);
  const sink = sinkFor(mock.brokers);
  await sink.start();
  await eventually(() => sink.ping(), GIVE_UP_MS);

  const large = (n: number, bytes: number): OutRecord => {
    const rec = record(topic, n);
    const text = 'é€x'.repeat(Math.floor((bytes - rec.value.length) / 6)); // 6 bytes a repeat
    return { ...rec, headers: { ...rec.headers, tracestate: `k${n}=${'v'.repeat(200)}` }, value: JSON.stringify({ ...JSON.parse(rec.value), text }) };
  };
  const records = [large(0, BATCHER.maxRecordBytes - 100), record(topic, 1), large(2, 70_000), large(3, 600)];
  expect(Buffer.byteLength(records[0].value)).toBeGreaterThan(BATCHER.maxRecordBytes - 200);
  await sink.write(records);
  const back = await mock.waitFor(records.length, GIVE_UP_MS, topic);
  const byId = new Map(back.map((r) => [r.headers.ce_id, r]));
  for (const sent of records) {
    expect(byId.get(sent.headers.ce_id)).toMatchObject({ key: sent.key, value: sent.value, headers: sent.headers });
  }
});

test('a write larger than one request may carry is sent as consecutive requests, in order', async () => {
  const topic = 'it.chunks';
  const mock = await mockWith([topic]);
  let produceRequests = 0;
  const sink = sinkFor(mock.brokers, { maxRequestBytes: 1000 }, { onProduceRequest: () => produceRequests++ });
  await sink.start();
  await eventually(() => sink.ping(), GIVE_UP_MS);

  // 330-331 bytes each, counting the 100-byte per-record allowance: 3 fit in 1000 → 7 requests.
  const records = Array.from({ length: 20 }, (_, n) => ({ ...record(topic, n), key: 'one-key' }));
  await sink.write(records);
  expect(produceRequests).toBe(7);
  const back = await mock.waitFor(20, GIVE_UP_MS, topic);
  expect(back.map((r) => r.headers.ce_id)).toEqual(records.map((r) => r.headers.ce_id));
});

/*
 * Faults the mock cannot produce, through test/helpers/kafka-fault-proxy.ts in front of it:
 * a broker that creates a topic when a client asks it to (as Kafka with
 * auto.create.topics.enable), a topic that is missing or may not be written, a leader move
 * (NOT_LEADER_FOR_PARTITION) that outlasts kafkajs' retries. Records still go to the mock.
 */
async function proxied(topics: string[], options: Partial<FaultProxyOptions> = {}): Promise<{ mock: KafkaMock; proxy: KafkaFaultProxy }> {
  const mock = await mockWith(topics);
  const proxy = await startKafkaFaultProxy({ upstream: mock.mockAddress, ...options });
  cleanup.push(() => proxy.stop());
  return { mock, proxy };
}

/** Record i's failure, whether the write failed as a whole or record by record. */
function failureOf(error: unknown, i: number): unknown {
  return error instanceof PartialWriteError ? error.failures.get(i) : error;
}

function failuresOf(error: unknown): Map<number, PublishError> {
  expect(error).toBeInstanceOf(PartialWriteError);
  return (error as PartialWriteError).failures as Map<number, PublishError>;
}

test('a topic that does not exist is never created: its records fail with topic_missing, the other topic of the same write is written', async () => {
  const good = 'it.topics.good';
  const typo = 'it.topics.typo';
  const { mock, proxy } = await proxied([good]); // a broker that creates topics when asked
  const sink = sinkFor(proxy.brokers);
  await sink.start();
  await eventually(() => sink.ping(), GIVE_UP_MS);

  const records = [record(good, 1), record(typo, 2), record(good, 3)];
  const error = await sink.write(records).then(() => undefined, (e: unknown) => e);
  const failures = failuresOf(error);
  expect([...failures.keys()]).toEqual([1]);
  expect(failures.get(1)).toMatchObject({ name: 'PublishError', reason: 'topic_missing', topic: typo });
  expect(failures.get(1)!.message).toContain('UNKNOWN_TOPIC_OR_PARTITION');

  const back = await mock.waitFor(2, GIVE_UP_MS, good);
  // Two keys, two partitions: the consumer may read them in either order.
  expect(back.map((r) => r.headers.ce_id).sort()).toEqual([records[0].headers.ce_id, records[2].headers.ce_id].sort());
  expect(await proxy.topicsOnBroker()).not.toContain(typo);
  expect(proxy.metadataRequests.length).toBeGreaterThan(0);
  expect(proxy.metadataRequests.filter((r) => r.allowAutoTopicCreation)).toEqual([]);
});

test('both configured topics are checked once connected; a missing one fails at once, and is found once it exists', async () => {
  const present = 'it.check.present';
  const later = 'it.check.later';
  const { mock, proxy } = await proxied([present, later]);
  proxy.setTopicFault(later, 'missing');
  const states: Array<[string, string]> = [];
  const sink = sinkFor(proxy.brokers, { topics: [present, later] }, { onTopicState: (topic, state) => states.push([topic, state]) });
  expect(sink.topics()).toEqual({ [present]: 'unknown', [later]: 'unknown' });
  await sink.start();
  await eventually(async () => expect(sink.topics()).toEqual({ [present]: 'present', [later]: 'missing' }), GIVE_UP_MS);
  expect(states).toEqual(expect.arrayContaining([[present, 'present'], [later, 'missing']]));

  // Known missing: refused without a round trip to the broker.
  const produced = proxy.produce.forwarded;
  const refused = await sink.write([record(later, 1)]).then(() => undefined, (e: unknown) => e);
  expect(failureOf(refused, 0)).toMatchObject({ name: 'PublishError', reason: 'topic_missing', topic: later });
  expect(proxy.produce.forwarded).toBe(produced);

  // Created (here: the fault lifted): the next check, within about 5 s, finds it.
  proxy.setTopicFault(later, undefined);
  await eventually(async () => expect(sink.topics()[later]).toBe('present'), GIVE_UP_MS);
  const rec = record(later, 2);
  await sink.write([rec]);
  const back = await mock.waitFor(1, GIVE_UP_MS, later);
  expect(back.map((r) => r.headers.ce_id)).toEqual([rec.headers.ce_id]);
});

test('a topic the gateway may not write to (TOPIC_AUTHORIZATION_FAILED) is reported as unauthorized and refused with topic_missing', async () => {
  const topic = 'it.check.acl';
  const { proxy } = await proxied([topic]);
  proxy.setTopicFault(topic, 'unauthorized');
  const sink = sinkFor(proxy.brokers, { topics: [topic] });
  await sink.start();
  await eventually(async () => expect(sink.topics()).toEqual({ [topic]: 'unauthorized' }), GIVE_UP_MS);
  const refused = await sink.write([record(topic, 1)]).then(() => undefined, (e: unknown) => e);
  expect(failureOf(refused, 0)).toMatchObject({ name: 'PublishError', reason: 'topic_missing', topic });
  expect((failureOf(refused, 0) as Error).message).toContain('TOPIC_AUTHORIZATION_FAILED');
});

test('idempotent producer, a leader move that outlasts the retries: only the batch in flight fails; the batches behind it are written', async () => {
  const topic = 'it.leader';
  const { mock, proxy } = await proxied([topic]);
  const sink = sinkFor(proxy.brokers, { idempotent: true }); // the proxy names a controller, so kafkajs gets a producer id
  await sink.start();
  await eventually(() => sink.ping(), GIVE_UP_MS);
  const batcher = new MicroBatcher(sink, { ...BATCHER, lingerMs: 0 });
  const warm = record(topic, 0);
  await batcher.publish([warm], 5000);

  // Every attempt of the next batch (kafkajs' retries + 1) is answered NOT_LEADER_FOR_PARTITION.
  const attempts = kafkaTiming(5000).retry.retries + 1;
  proxy.refuseProduce(KAFKA_ERROR.NOT_LEADER_FOR_PARTITION, attempts);
  const moved = publishTimed(batcher, record(topic, 1), 5000);
  await eventually(async () => expect(proxy.produce.refused).toBeGreaterThanOrEqual(1), 5000);
  const behind = [2, 3, 4].map((n) => record(topic, n));
  const queued = behind.map((r) => publishTimed(batcher, r, 5000));

  const first = await moved;
  expect(first.ok).toBe(false);
  expect(reasonOf(first)).toBe('unavailable');
  expect(proxy.produce.refused).toBe(attempts);
  const rest = await Promise.all(queued);
  expect(rest.map((o) => [o.ok, reasonOf(o)])).toEqual(behind.map(() => [true, undefined]));
  const ids = [warm, ...behind].map((r) => r.headers.ce_id);
  const back = await mock.waitFor((records) => ids.every((id) => records.some((r) => r.headers.ce_id === id)), GIVE_UP_MS, topic);
  expect(back.map((r) => r.headers.ce_id)).not.toContain(first.id);
});
