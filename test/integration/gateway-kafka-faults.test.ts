/**
 * The built gateway (dist/main.js, a child process) against librdkafka's mock cluster when
 * the broker misbehaves: stalled (SIGSTOP) during a steady burst, stalled with a small publish
 * queue, absent at start and appearing later on the configured port, killed under load.
 * Each test has its own mock broker and gateway.
 *
 * Every check here is of what happened, never of how long it took: on a busy machine an
 * answer may come late for reasons that are not the gateway's. Which requests must be 503 is
 * told by order (sent and answered while the broker was stopped or gone), not by deadlines;
 * the times are printed. How fast answers come under a stalled broker is the bench's to
 * measure. The timeouts passed to the waits only say when to give up.
 */
import { randomUUID } from 'node:crypto';
import {
  byEventId,
  eventOf,
  metricWithLabels,
  postOrder,
  readyz,
  serverSlowest,
  sinkUp,
  sleep,
  startKafkaGateway,
  until,
  waitForIds,
  type Answer,
  type KafkaGateway,
} from '../helpers/gateway-kafka';
import { startKafkaMock, type KafkaMock } from '../helpers/kafka-mock';
import { reservePort } from '../helpers/ports';
import { kafkaTiming } from '../../src/publish/timing';

/** When a wait gives up (not a deadline the gateway must meet). */
const GIVE_UP_MS = 60_000;
// Longer than the waits, so a wait that gives up says what it waited for.
jest.setTimeout(4 * GIVE_UP_MS);

const cleanup: (() => Promise<unknown>)[] = [];
const runCleanup = async () => {
  while (cleanup.length > 0) await cleanup.pop()!().catch(() => undefined);
};
afterEach(runCleanup);
afterAll(runCleanup);

async function mockWith(topic: string, port?: number): Promise<KafkaMock> {
  const mock = await startKafkaMock({ topics: [topic], port });
  cleanup.push(() => mock.stop());
  return mock;
}

async function gatewayWith(brokers: string, env: Record<string, string>): Promise<KafkaGateway> {
  const gateway = await startKafkaGateway(brokers, env);
  cleanup.push(() => gateway.dispose());
  return gateway;
}

const uniqueTopic = (name: string) => `${name}.${randomUUID().slice(0, 8)}`;

/** Kafka connected, as /readyz's body reports it. */
async function ready(gateway: KafkaGateway, timeoutMs = GIVE_UP_MS): Promise<number> {
  return sinkUp(gateway.adminUrl, timeoutMs);
}

interface Sent extends Answer {
  /** ms after the load started */
  at: number;
}

/**
 * A steady load: `perTick` POSTs every `everyMs` for `ticks` ticks, each with its own
 * Idempotency-Key; `onTick(tick, answered)` runs before a tick's requests are sent, with the
 * answers so far (in the order they came). Ticks are paced from
 * the one before (at least `everyMs` apart), never caught up: on a busy machine a late tick
 * does not bunch the next ones together, so N ticks always span at least N × `everyMs` (a
 * stall begun at one tick lasts at least until the other, however late both ran).
 */
async function steadyLoad(
  gateway: KafkaGateway,
  options: {
    everyMs: number;
    perTick: number;
    ticks: number;
    prefix: string;
    onTick?: (tick: number, answered: readonly Sent[]) => void | Promise<void>;
  },
): Promise<Sent[]> {
  const started = performance.now();
  const calls: Promise<Sent>[] = [];
  const answered: Sent[] = [];
  for (let tick = 0; tick < options.ticks; tick++) {
    await options.onTick?.(tick, answered);
    for (let i = 0; i < options.perTick; i++) {
      const n = tick * options.perTick + i;
      const at = performance.now() - started;
      const call = postOrder(gateway.url, `${options.prefix}-${n}-${randomUUID()}`, { n }).then((a) => ({ ...a, at }));
      calls.push(call.then((sent) => (answered.push(sent), sent)));
    }
    await sleep(options.everyMs);
  }
  return Promise.all(calls);
}

const slowest = (answers: Answer[]) => Math.round(Math.max(0, ...answers.map((a) => a.ms)));

/** Sent after `from` and answered before `to` (ms since the load started, on the test's clock). */
const within = (a: Sent, from: number, to: number) => a.at >= from && a.at + a.ms <= to;

function expect503(answer: Answer, reasons: string[]): void {
  expect(answer.status).toBe(503);
  expect(answer.retryAfter).toMatch(/^\d+$/);
  expect(answer.json.error.code).toBe('SERVICE_UNAVAILABLE');
  expect(reasons).toContain(answer.json.error.details?.reason);
}

test('broker stalled (SIGSTOP) during a steady burst: 200 or 503, nothing acknowledged lost, 503s retry cleanly', async () => {
  const topic = uniqueTopic('stall');
  const timeoutMs = 1500;
  const mock = await mockWith(topic);
  const gateway = await gatewayWith(mock.brokers, { TOPIC_TRIGGERS: topic, PUBLISH_TIMEOUT_MS: String(timeoutMs) });
  await ready(gateway);
  expect((await postOrder(gateway.url, `warm-${randomUUID()}`, { warm: true })).status).toBe(200);

  // 5 requests every 50 ms; the broker stops at the 20th tick and continues at the 60th (2 s
  // later at least, longer than the deadline), and not before a request sent during the stall
  // has been answered: kafkajs gives up on the request in flight within the deadline (2
  // attempts of 540 ms), and no batch is sent to the stalled broker after it.
  const everyMs = 50;
  const pauseTick = 20;
  const resumeTick = 60;
  let answers: Sent[];
  let pausedAt = 0;
  let resumedAt = 0;
  const started = performance.now();
  try {
    answers = await steadyLoad(gateway, {
      everyMs,
      perTick: 5,
      ticks: 80,
      prefix: 'stall',
      onTick: async (tick, answered) => {
        if (tick === pauseTick) {
          mock.pause();
          pausedAt = performance.now() - started;
        }
        if (tick === resumeTick) {
          await until(() => answered.some((a) => a.at >= pausedAt), GIVE_UP_MS, 'a request sent during the stall to be answered');
          mock.resume();
          resumedAt = performance.now() - started;
        }
      },
    });
  } finally {
    mock.resume();
  }

  expect(answers.filter((a) => a.status !== 200 && a.status !== 503).map((a) => [a.status, a.json])).toEqual([]);
  const ok = answers.filter((a) => a.status === 200);
  const refused = answers.filter((a) => a.status === 503);
  for (const answer of refused) expect503(answer, ['timeout', 'sink_unavailable']);
  for (const answer of ok) expect(answer.eventId).toMatch(/^[0-9a-f-]{36}$/);
  expect(ok.length).toBeGreaterThan(0);
  expect(refused.length).toBeGreaterThan(0);
  // Sent after the broker stopped and answered before it continued: nothing could acknowledge
  // them, so only 503 (there is one at least: the broker waited for it).
  const doomed = answers.filter((a) => within(a, pausedAt, resumedAt));
  expect(doomed.length).toBeGreaterThan(0);
  expect(doomed.filter((a) => a.status !== 503).map((a) => [a.status, Math.round(a.at)])).toEqual([]);

  // Nothing acknowledged is lost.
  await waitForIds(
    mock,
    ok.map((a) => a.eventId!),
    topic,
    GIVE_UP_MS,
  );

  // Every 503'd request sent again with its Idempotency-Key: its claim was released, so it is
  // accepted now (not 409), and it lands in the topic.
  await ready(gateway);
  const retries = await Promise.all(refused.map((a) => postOrder(gateway.url, a.key, JSON.parse(a.body))));
  expect(retries.filter((r) => r.status !== 200).map((r) => [r.status, r.json])).toEqual([]);
  const all = await waitForIds(
    mock,
    retries.map((r) => r.eventId!),
    topic,
    GIVE_UP_MS,
  );

  // A key appears more than once only when its first attempt reached Kafka after its deadline
  // (the broker took the stalled request once it continued): the same idempotencyKey, the first
  // records with the event id the sender never got. kafkajs makes at most retries + 1 attempts,
  // derived from the deadline, and each attempt at a stalled broker is a copy (the mock is
  // used with the non-idempotent producer; Kafka deduplicates an idempotent producer's copies).
  const attempts = kafkaTiming(timeoutMs).retry.retries + 1;
  const byKey = new Map<string, string[]>();
  for (const record of all) {
    const key = eventOf(record).data.idempotencyKey as string;
    byKey.set(key, [...(byKey.get(key) ?? []), record.headers.ce_id]);
  }
  for (const answer of ok) {
    const ids = byKey.get(answer.key)!;
    expect(new Set(ids)).toEqual(new Set([answer.eventId]));
    expect(ids.length).toBeLessThanOrEqual(attempts);
  }
  let duplicateKeys = 0;
  refused.forEach((answer, i) => {
    const ids = byKey.get(answer.key)!;
    const distinct = [...new Set(ids)];
    expect(distinct.length).toBeLessThanOrEqual(2);
    expect(distinct[distinct.length - 1]).toBe(retries[i].eventId);
    expect(ids.length).toBeLessThanOrEqual(2 * attempts);
    if (distinct.length > 1) duplicateKeys++;
  });
  const extraCopies = all.length - byEventId(all).size;
  console.log(
    `stalled broker: ${answers.length} requests answered (slowest 2xx ${slowest(ok)} ms, slowest 503 ${slowest(refused)} ms; ` +
      `in the gateway's log ${JSON.stringify(serverSlowest(gateway.output()))}), ` +
      `${ok.length} 2xx, ${refused.length} 503; all ${refused.length} retries 200; ` +
      `${duplicateKeys} keys twice in the topic (first attempt written after its deadline), ` +
      `${extraCopies} extra copies of an attempt (kafkajs' ${attempts} attempts at the stalled broker)`,
  );
});

test('bounded queue: with the broker stalled, requests past PUBLISH_QUEUE_MAX get 503 queue_full', async () => {
  const topic = uniqueTopic('queue');
  const timeoutMs = 4000;
  const queueMax = 5;
  const mock = await mockWith(topic);
  const gateway = await gatewayWith(mock.brokers, {
    TOPIC_TRIGGERS: topic,
    PUBLISH_TIMEOUT_MS: String(timeoutMs),
    PUBLISH_QUEUE_MAX: String(queueMax),
  });
  await ready(gateway);
  expect((await postOrder(gateway.url, `warm-${randomUUID()}`, { warm: true })).status).toBe(200);

  mock.pause();
  let answers: Answer[];
  try {
    answers = await Promise.all(Array.from({ length: 40 }, (_, n) => postOrder(gateway.url, `q-${n}-${randomUUID()}`, { n })));
  } finally {
    mock.resume();
  }

  // Held: queued or in flight until kafkajs gave up on the stalled broker (before the deadline:
  // sink_unavailable) or until the deadline (timeout).
  for (const answer of answers) expect503(answer, ['queue_full', 'timeout', 'sink_unavailable']);
  const full = answers.filter((a) => a.json.error.details.reason === 'queue_full');
  const held = answers.filter((a) => a.json.error.details.reason !== 'queue_full');
  // At most one batch in flight (it never holds more than the queue did) and a full queue.
  expect(held.length).toBeLessThanOrEqual(2 * queueMax);
  expect(full.length).toBeGreaterThanOrEqual(answers.length - 2 * queueMax);
  console.log(
    `bounded queue (${queueMax}): ${full.length} refused at once (slowest ${slowest(full)} ms), ` +
      `${held.length} held (slowest ${slowest(held)} ms; ${held.filter((a) => a.json.error.details.reason === 'timeout').length} ` +
      `until the ${timeoutMs} ms deadline)`,
  );

  // Once the broker answers again the gateway accepts again.
  await ready(gateway);
  const after = await postOrder(gateway.url, `after-${randomUUID()}`, { after: true });
  expect(after.status).toBe(200);
  await waitForIds(mock, [after.eventId!], topic);
});

test('broker gone at start: the process starts and is ready (Kafka reported down), refuses with 503, and recovers when a broker appears', async () => {
  const topic = uniqueTopic('late');
  // The broker appears later on this port: reserved, never one the kernel hands to another socket meanwhile.
  const reserved = await reservePort();
  cleanup.push(async () => reserved.release());
  const port = reserved.port;
  const gateway = await gatewayWith(`127.0.0.1:${port}`, { TOPIC_TRIGGERS: topic, PUBLISH_TIMEOUT_MS: '1500' });

  // Ready: Kafka is down for every pod alike; it is reported, not a reason to leave the Service.
  const notConnected = await readyz(gateway.adminUrl);
  expect(notConnected.status).toBe(200);
  expect(notConnected.json.status).toBe('ready');
  expect(notConnected.json.checks.sink).toBe('down');
  expect(notConnected.json.details.sink.error).toMatch(/^kafka: /);
  expect((await fetch(`${gateway.url}/healthz`)).status).toBe(200);
  expect(await metricWithLabels(gateway.adminUrl, 'igw_dependency_up', 'dependency="sink"')).toBe(0);

  const key = `late-${randomUUID()}`;
  const refused = await postOrder(gateway.url, key, { late: true });
  expect503(refused, ['sink_unavailable']);

  // A fresh broker on the port the gateway was configured with.
  const mock = await mockWith(topic, port);
  const tookMs = await ready(gateway);
  console.log(`broker appeared: /readyz reports the sink up after ${Math.round(tookMs)} ms`);
  expect(await metricWithLabels(gateway.adminUrl, 'igw_dependency_up', 'dependency="sink"')).toBe(1);

  // The refused request's claim was released: the same key is accepted now.
  const accepted = await postOrder(gateway.url, key, { late: true });
  expect(accepted.status).toBe(200);
  const [record] = (await waitForIds(mock, [accepted.eventId!], topic)).filter((r) => r.headers.ce_id === accepted.eventId);
  expect(eventOf(record).data.idempotencyKey).toBe(key);
  expect(mock.records(topic)).toHaveLength(1);
});

test('broker killed under load: 503 once it is gone, /readyz stays 200 and reports the sink down, the process stays alive', async () => {
  const topic = uniqueTopic('killed');
  const timeoutMs = 1500;
  const mock = await mockWith(topic);
  const gateway = await gatewayWith(mock.brokers, { TOPIC_TRIGGERS: topic, PUBLISH_TIMEOUT_MS: String(timeoutMs) });
  await ready(gateway);

  const everyMs = 50;
  const killTick = 16;
  let killedAt = 0;
  const started = performance.now();
  const answers = await steadyLoad(gateway, {
    everyMs,
    perTick: 5,
    ticks: 50,
    prefix: 'killed',
    onTick: async (tick) => {
      if (tick === killTick) {
        await mock.stop();
        killedAt = performance.now() - started;
      }
    },
  });

  expect(answers.filter((a) => a.status !== 200 && a.status !== 503).map((a) => [a.status, a.json])).toEqual([]);
  const refused = answers.filter((a) => a.status === 503);
  for (const answer of refused) expect503(answer, ['timeout', 'sink_unavailable']);
  expect(answers.filter((a) => a.status === 200 && a.at < killedAt).length).toBeGreaterThan(0);
  // Sent once the broker was gone: nothing could acknowledge them.
  const afterKill = answers.filter((a) => a.at >= killedAt);
  expect(afterKill.length).toBeGreaterThan(0);
  expect(afterKill.filter((a) => a.status !== 503).map((a) => [a.status, Math.round(a.at)])).toEqual([]);
  console.log(
    `killed broker: ${answers.length} requests, ${answers.length - refused.length} 2xx, ${refused.length} 503 ` +
      `(slowest ${slowest(answers)} ms)`,
  );

  await until(
    async () => {
      const r = await readyz(gateway.adminUrl);
      expect(r.status).toBe(200);
      return r.json.checks.sink === 'down' && /^kafka: /.test(r.json.details.sink.error);
    },
    GIVE_UP_MS,
    '/readyz to report the sink down',
  );
  expect((await fetch(`${gateway.url}/healthz`)).status).toBe(200);
  const later = await postOrder(gateway.url, `later-${randomUUID()}`, { later: true });
  expect503(later, ['sink_unavailable', 'timeout']);
  expect(gateway.child.exitCode).toBeNull();
  expect(gateway.child.signalCode).toBeNull();
});

test('SIGTERM while the broker is stalled: the drain ends within the grace, exit 0', async () => {
  const topic = uniqueTopic('drain');
  const timeoutMs = 1500;
  // The smallest grace this deadline allows: 1500 + the 2250 ms write timeout + 2000 to close.
  const graceMs = 5750;
  const mock = await mockWith(topic);
  const gateway = await gatewayWith(mock.brokers, {
    TOPIC_TRIGGERS: topic,
    PUBLISH_TIMEOUT_MS: String(timeoutMs),
    SHUTDOWN_GRACE_MS: String(graceMs),
    REQUEST_TIMEOUT_MS: String(graceMs - 500),
    HEADERS_TIMEOUT_MS: String(graceMs - 1000),
  });
  await ready(gateway);
  expect((await postOrder(gateway.url, `warm-${randomUUID()}`, { warm: true })).status).toBe(200);

  mock.pause();
  try {
    const inFlight = Array.from({ length: 10 }, (_, n) => postOrder(gateway.url, `drain-${n}-${randomUUID()}`, { n }));
    // A Produce request went out to the stalled broker and timed out: a write is in flight.
    await gateway.waitForOutput('Request Produce(key: 0, version: 7) timed out', GIVE_UP_MS);
    const started = performance.now();
    gateway.child.kill('SIGTERM');
    const code = await gateway.exited;
    const tookMs = performance.now() - started;
    const answers = await Promise.all(inFlight);
    console.log(`drain during a stall: exit ${code} after ${Math.round(tookMs)} ms (grace ${graceMs} ms)`);
    // 0 only when the drain ended within the grace: past it the gateway exits 1 by itself.
    expect(code).toBe(0);
    expect(gateway.output()).toContain('"msg":"stopped"');
    for (const answer of answers) expect503(answer, ['timeout', 'sink_unavailable']);
  } finally {
    mock.resume();
  }
});
