/**
 * KafkaSink behind the MicroBatcher, against librdkafka's mock cluster (started through kcat)
 * over TCP: batching, a stalled broker, a dead broker, no broker at start and one that
 * appears later. Each test has its own mock broker.
 */
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { MicroBatcher, type BatcherOptions } from '../../src/publish/batcher';
import { PublishError } from '../../src/publish/errors';
import { KafkaSink, type KafkaSinkOptions } from '../../src/publish/kafka';
import type { OutRecord } from '../../src/publish/sink';
import { freePort, startKafkaMock, type KafkaMock } from '../helpers/kafka-mock';

const BATCHER: BatcherOptions = {
  maxRecords: 500,
  maxBytes: 4 * 1024 * 1024,
  lingerMs: 2,
  queueMax: 10_000,
  maxRecordBytes: 1_000_000,
};
/** Settling later than the deadline by more than this is a failure (2-core CI machines). */
const SLACK_MS = 500;

const quiet = pino({ level: 'silent' });

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanup.length > 0) await cleanup.pop()!().catch(() => undefined);
});

function sinkFor(brokers: string, extra: Partial<KafkaSinkOptions> = {}): KafkaSink {
  const sink = new KafkaSink({
    brokers: [brokers],
    clientId: 'kafka-sink-test',
    idempotent: false, // the mock cannot hand kafkajs a producer id (see kafka-mock.ts)
    compression: 'none',
    logger: quiet,
    ...extra,
  });
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
  const sink = sinkFor(mock.brokers, { onProduceRequest: () => produceRequests++ });
  await sink.start();
  await eventually(() => sink.ping(), 10_000);
  const batcher = new MicroBatcher(sink, BATCHER);

  const records = Array.from({ length: 1000 }, (_, n) => record(topic, n));
  const outcomes = await Promise.all(records.map((r) => publishTimed(batcher, r, 10_000)));

  expect(outcomes.filter((o) => !o.ok)).toEqual([]);
  const back = await mock.waitFor(1000, 15_000, topic);
  expect(new Set(back.map((r) => r.headers.ce_id))).toEqual(new Set(records.map((r) => r.headers.ce_id)));
  expect(back).toHaveLength(1000);
  console.log(`Produce requests for 1000 concurrent publishes: ${produceRequests}`);
  expect(produceRequests).toBeGreaterThanOrEqual(1);
  expect(produceRequests).toBeLessThan(100);
});

test('a broker stalled (SIGSTOP) during a burst: every call settles by its deadline, nothing acknowledged is lost', async () => {
  const topic = 'it.stall';
  const mock = await mockWith([topic]);
  const sink = sinkFor(mock.brokers);
  await sink.start();
  await eventually(() => sink.ping(), 10_000);
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
    const late = outcomes.filter((o) => o.ms > timeoutMs + SLACK_MS);
    expect(late).toEqual([]);
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
      15_000,
      topic,
    );
    const ids = new Set(back.map((r) => r.headers.ce_id));
    expect(acknowledged.filter((id) => !ids.has(id))).toEqual([]);

    // And the sink recovers once the broker answers again.
    const after = record(topic, n++);
    await expect(batcher.publish([after], 15_000)).resolves.toBeUndefined();
    await mock.waitFor((records) => records.some((r) => r.headers.ce_id === after.headers.ce_id), 10_000, topic);
  } finally {
    mock.resume();
    await Promise.allSettled(calls);
  }
});

test('a broker that dies: publishes fail promptly as retryable, ping rejects naming kafka', async () => {
  const topic = 'it.dead';
  const mock = await mockWith([topic]);
  const sink = sinkFor(mock.brokers);
  await sink.start();
  await eventually(() => sink.ping(), 10_000);
  const batcher = new MicroBatcher(sink, BATCHER);
  await batcher.publish([record(topic, 0)], 5000);

  await mock.stop();
  const timeoutMs = 1500;
  const outcomes = await Promise.all(
    Array.from({ length: 20 }, (_, n) => publishTimed(batcher, record(topic, n + 1), timeoutMs)),
  );
  expect(outcomes.filter((o) => o.ok)).toEqual([]);
  for (const o of outcomes) {
    expect(['unavailable', 'timeout']).toContain(reasonOf(o));
    expect(o.ms).toBeLessThan(timeoutMs + SLACK_MS);
  }
  // The ping result is cached for about a second; past that the probe finds no broker.
  await new Promise((resolve) => setTimeout(resolve, 1100));
  await expect(sink.ping()).rejects.toThrow(/^kafka: /);
});

test('no broker at start: start() resolves, not ready, then recovers when a broker appears on that port', async () => {
  const topic = 'it.late';
  const port = await freePort();
  const sink = sinkFor(`127.0.0.1:${port}`);

  const started = performance.now();
  await sink.start();
  expect(performance.now() - started).toBeLessThan(3000);
  await expect(sink.ping()).rejects.toThrow(/^kafka: not connected/);

  const batcher = new MicroBatcher(sink, BATCHER);
  const refused = await publishTimed(batcher, record(topic, 0), 1500);
  expect(refused.ok).toBe(false);
  expect(reasonOf(refused)).toBe('unavailable');
  expect((refused.error as Error).message).toMatch(/^kafka: not connected/);

  // A fresh broker on the port the sink was configured with.
  const mock = await mockWith([topic], port);
  expect(mock.brokers).toBe(`127.0.0.1:${port}`);
  await eventually(() => sink.ping(), 15_000);

  const rec = record(topic, 1);
  await expect(batcher.publish([rec], 5000)).resolves.toBeUndefined();
  const back = await mock.waitFor(1, 10_000, topic);
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
  await eventually(() => plain.ping(), 10_000);
  const rec = record(topic, 1);
  await plain.write([rec]);
  const back = await mock.waitFor(1, 10_000, topic);
  expect(back.map((r) => r.headers.ce_id)).toEqual([rec.headers.ce_id]);
});

test('gzip compression: records read back as written', async () => {
  const topic = 'it.gzip';
  const mock = await mockWith([topic]);
  const sink = sinkFor(mock.brokers, { compression: 'gzip' });
  await sink.start();
  await eventually(() => sink.ping(), 10_000);

  const records = Array.from({ length: 20 }, (_, n) => record(topic, n));
  await sink.write(records);
  const back = await mock.waitFor(20, 10_000, topic);
  const byId = new Map(back.map((r) => [r.headers.ce_id, r]));
  for (const sent of records) {
    expect(byId.get(sent.headers.ce_id)).toMatchObject({ key: sent.key, value: sent.value, headers: sent.headers });
  }
});

test('a write larger than one request may carry is sent as consecutive requests, in order', async () => {
  const topic = 'it.chunks';
  const mock = await mockWith([topic]);
  let produceRequests = 0;
  const sink = sinkFor(mock.brokers, { maxRequestBytes: 1000, onProduceRequest: () => produceRequests++ });
  await sink.start();
  await eventually(() => sink.ping(), 10_000);

  // 330-331 bytes each, counting the 100-byte per-record allowance: 3 fit in 1000 → 7 requests.
  const records = Array.from({ length: 20 }, (_, n) => ({ ...record(topic, n), key: 'one-key' }));
  await sink.write(records);
  expect(produceRequests).toBe(7);
  const back = await mock.waitFor(20, 10_000, topic);
  expect(back.map((r) => r.headers.ce_id)).toEqual(records.map((r) => r.headers.ce_id));
});
