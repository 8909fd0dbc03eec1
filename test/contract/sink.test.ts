/**
 * One contract for every Sink: the embedded file sink and the Kafka sink (against librdkafka's
 * mock cluster over TCP) pass the same tests. Each harness reads back what arrived in its own
 * way: the file sink's `<dir>/<topic>.ndjson`, the Kafka topic through kcat's consumer.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { FileSink } from '../../src/publish/file';
import { KafkaSink } from '../../src/publish/kafka';
import type { OutRecord, Sink } from '../../src/publish/sink';
import { startKafkaMock, type KafkaMock } from '../helpers/kafka-mock';

interface ReadBackRecord {
  topic: string;
  key: string | null;
  headers: Record<string, string>;
  value: string | null;
}

interface Harness {
  name: string;
  setup(topics: string[]): Promise<void>;
  teardown(): Promise<void>;
  create(): Sink;
  /** Resolves with the topic's records once at least `count` are there (or throws). */
  readBack(topic: string, count: number): Promise<ReadBackRecord[]>;
}

const quiet = pino({ level: 'silent' });

function fileHarness(): Harness {
  let dir = '';
  return {
    name: 'file',
    async setup() {
      dir = await mkdtemp(join(tmpdir(), 'sink-contract-'));
    },
    async teardown() {
      await rm(dir, { recursive: true, force: true });
    },
    create: () => new FileSink({ dir }),
    async readBack(topic, count) {
      const text = await readFile(join(dir, `${topic}.ndjson`), 'utf8').catch(() => '');
      const records = text
        .split('\n')
        .filter((line) => line !== '')
        .map(fileLineRecord);
      if (records.length < count) throw new Error(`${topic}: ${records.length} of ${count} records`);
      return records;
    },
  };
}

/** The value exactly as written: the line is `{"topic","key","headers",` then `"value":<raw>}`. */
function fileLineRecord(line: string): ReadBackRecord {
  const parsed = JSON.parse(line) as { topic: string; key: string; headers: Record<string, string> };
  const head = JSON.stringify({ topic: parsed.topic, key: parsed.key, headers: parsed.headers });
  const prefix = `${head.slice(0, -1)},"value":`;
  expect(line.startsWith(prefix)).toBe(true);
  expect(line.endsWith('}')).toBe(true);
  return { ...parsed, value: line.slice(prefix.length, -1) };
}

function kafkaHarness(): Harness {
  let mock: KafkaMock | undefined;
  return {
    name: 'kafka',
    async setup(topics) {
      mock = await startKafkaMock({ topics });
    },
    async teardown() {
      await mock?.stop();
    },
    create: () =>
      new KafkaSink(
        {
          brokers: [mock!.brokers],
          clientId: 'sink-contract',
          idempotent: false, // the mock cannot hand kafkajs a producer id (see kafka-mock.ts)
          compression: 'none',
        },
        { logger: quiet },
      ),
    readBack: (topic, count) => mock!.waitFor(count, 10_000, topic),
  };
}

/** A CloudEvent with the characters that break naive framing: tabs, newlines, quotes, non-ASCII. */
function event(n: number, extra: Record<string, unknown> = {}): { id: string; value: string } {
  const id = randomUUID();
  const value = JSON.stringify({
    specversion: '1.0',
    id,
    source: '/api/webhooks/trigger/orders',
    type: 'webhook.trigger',
    time: new Date(0).toISOString(),
    subject: 'wf-1',
    datacontenttype: 'application/json',
    data: {
      n,
      input: { note: 'tab\there\nnew line, "quotes", back\\slash, é ü 中文 😀, \u2028 \u0001' },
      ...extra,
    },
  });
  return { id, value };
}

function record(topic: string, key: string, n: number): OutRecord {
  const { id, value } = event(n);
  return {
    topic,
    key,
    headers: { 'content-type': 'application/cloudevents+json', ce_type: 'webhook.trigger', ce_id: id },
    value,
  };
}

async function waitReady(sink: Sink): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      await sink.ping();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

const TOPICS = {
  ordered: 'contract.ordered',
  a: 'contract.a',
  b: 'contract.b',
  empty: 'contract.empty',
};

describe.each([fileHarness(), kafkaHarness()])('Sink contract: $name', (harness) => {
  let sink: Sink;

  beforeAll(async () => {
    await harness.setup(Object.values(TOPICS));
    sink = harness.create();
    await sink.start();
    await waitReady(sink);
  });

  afterAll(async () => {
    await sink?.close();
    await harness.teardown();
  });

  test('ping resolves once started', async () => {
    await expect(sink.ping()).resolves.toBeUndefined();
  });

  test('records arrive in order with key, headers and the value byte for byte', async () => {
    const records = [1, 2, 3, 4, 5].map((n) => record(TOPICS.ordered, 'wf-ordered', n));
    await sink.write(records);

    const back = await harness.readBack(TOPICS.ordered, records.length);
    expect(back).toHaveLength(records.length);
    back.forEach((got, i) => {
      const sent = records[i];
      expect(got.topic).toBe(TOPICS.ordered);
      expect(got.key).toBe(sent.key);
      expect(got.headers).toEqual({
        'content-type': 'application/cloudevents+json',
        ce_type: 'webhook.trigger',
        ce_id: sent.headers.ce_id,
      });
      expect(got.value).toBe(sent.value);
      expect(Buffer.from(got.value!, 'utf8').equals(Buffer.from(sent.value, 'utf8'))).toBe(true);
    });
  });

  test('one write to several topics reaches each topic', async () => {
    const records = [
      record(TOPICS.a, 'wf-a', 1),
      record(TOPICS.b, 'wf-b', 1),
      record(TOPICS.a, 'wf-a', 2),
      record(TOPICS.b, 'wf-b', 2),
    ];
    await sink.write(records);

    const a = await harness.readBack(TOPICS.a, 2);
    const b = await harness.readBack(TOPICS.b, 2);
    expect(a.map((r) => r.value)).toEqual([records[0].value, records[2].value]);
    expect(b.map((r) => r.value)).toEqual([records[1].value, records[3].value]);
    expect(a.map((r) => r.key)).toEqual(['wf-a', 'wf-a']);
    expect(b.map((r) => r.key)).toEqual(['wf-b', 'wf-b']);
  });

  test('an empty write resolves and writes nothing', async () => {
    await expect(sink.write([])).resolves.toBeUndefined();
    // A record written after it is the first and only one on the topic.
    const marker = record(TOPICS.empty, 'wf-empty', 1);
    await sink.write([marker]);
    const back = await harness.readBack(TOPICS.empty, 1);
    expect(back.map((r) => r.value)).toEqual([marker.value]);
  });

  test('close is safe twice', async () => {
    const other = harness.create();
    await other.start();
    await expect(other.close()).resolves.toBeUndefined();
    await expect(other.close()).resolves.toBeUndefined();
  });

  test('close is safe without start', async () => {
    const other = harness.create();
    await expect(other.close()).resolves.toBeUndefined();
  });
});
