/**
 * Scenario 1: the broker stalls (SIGSTOP) and later dies (SIGKILL, then a new one on the same
 * port) under a steady stream of webhooks with unique Idempotency-Keys.
 *
 * The mock broker keeps its log in memory only, so a killed broker takes every record its
 * consumer had not read yet with it. The kill therefore happens at an instant when every
 * acknowledgement the client has received is already read back and no request is in flight;
 * the stream goes on right after. (A real cluster keeps acknowledged records on its replicas.)
 */
import { Agent } from 'node:http';
import { startKafkaMock, type ConsumedRecord, type KafkaMock } from '../helpers/kafka-mock';
import { serverTimings } from '../helpers/gateway-client';
import { reservePort } from '../helpers/ports';
import { deleteKeys, requireRedis, uniquePrefix, REDIS_TEST_URL } from '../helpers/redis';
import { duplicatesBySeq, eventOfRecord, gatewayWith, runId, SteadyStream, TRIGGER_PATH, workDir } from './fixtures';
import { Cleanup, countBy, formatCounts, header, is2xx, log, percentile, Report, send, sleep, statusOf, until, waitReady, type Sent } from './lib';

const PUBLISH_TIMEOUT_MS = 1500;
const SLACK_MS = 1000;
const INTERVAL_MS = 20; // 50 requests/s
const STALL_MS = 4000;
const DEAD_MS = 3000;

interface Request {
  seq: number;
  key: string;
  body: string;
  sent: Sent;
}

export async function brokerScenario(): Promise<Report> {
  const report = new Report('1. broker stall + death');
  const cleanup = new Cleanup();
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  cleanup.add('agent', () => agent.destroy());
  try {
    const id = runId();
    const topic = `rel.broker.${id}`;
    const { triggersFile } = workDir(cleanup, 'broker');
    const redis = await requireRedis();
    cleanup.add('redis client', () => redis.quit());
    const prefix = uniquePrefix('rel-broker');
    cleanup.add('delete prefixed keys', () => deleteKeys(redis, prefix));

    // The second broker comes back on the same port: reserved, never one the kernel hands out (helpers/ports.ts).
    const reserved = await reservePort();
    cleanup.add('kafka port', () => reserved.release());
    const kafkaPort = reserved.port;
    const first = await startKafkaMock({ topics: [topic], port: kafkaPort });
    let second: KafkaMock | undefined;
    cleanup.add('first kafka mock', () => first.stop());
    cleanup.add('second kafka mock', () => second?.stop());

    const gateway = await gatewayWith(cleanup, {
      REDIS_URL: REDIS_TEST_URL,
      REDIS_PREFIX: prefix,
      KAFKA_BROKERS: first.brokers,
      KAFKA_IDEMPOTENT: 'false', // the mock cannot hand out producer ids
      TOPIC_TRIGGERS: topic,
      PUBLISH_TIMEOUT_MS: String(PUBLISH_TIMEOUT_MS),
      TRIGGERS_FILE: triggersFile,
    });
    if (!(await waitReady(gateway.adminUrl))) throw new Error('gateway not ready within 20 s');

    const requests: Request[] = [];
    const post = (key: string, body: string, requestId?: string) =>
      send(gateway.url, `/api/webhooks/trigger/${TRIGGER_PATH}`, {
        agent,
        headers: { 'content-type': 'application/json', 'idempotency-key': key, ...(requestId && { 'x-request-id': requestId }) },
        body,
        timeoutMs: PUBLISH_TIMEOUT_MS + 8000,
      });
    const stream = new SteadyStream(
      async (seq) => {
        const key = `rel1-${id}-${seq}`;
        const body = JSON.stringify({ seq, scenario: 'broker', note: 'steady stream' });
        // Its X-Request-Id is its key: the gateway's access log times it (see the deadline check).
        const sent = await post(key, body, key);
        requests.push({ seq, key, body, sent });
      },
      INTERVAL_MS,
      5000,
    );

    const ackedIds = () => requests.filter((r) => is2xx(r.sent)).map((r) => header(r.sent, 'x-event-id')!);
    const idsOf = (records: ConsumedRecord[]) => new Set(records.map((r) => r.headers.ce_id));

    log('  steady stream of 50 requests/s started');
    stream.start();
    await sleep(2500);

    // Stall.
    const stallAt = performance.now();
    first.pause();
    log(`  broker stopped (SIGSTOP) for ${STALL_MS} ms`);
    await sleep(STALL_MS);
    first.resume();
    const stallEnd = performance.now();
    log('  broker continued (SIGCONT)');
    await sleep(3000);

    // Death, at an instant when everything acknowledged so far has been read back.
    const caughtUp = await until(() => {
      const seen = idsOf(first.records(topic));
      return ackedIds().every((eventId) => seen.has(eventId));
    }, 15_000, 20);
    report.check(
      'acknowledged before and after the stall are in the topic before the broker dies',
      caughtUp,
      `${ackedIds().length} acknowledged so far, ${first.records(topic).length} records read back`,
    );
    const quiet = await until(() => {
      if (stream.inFlight > 0) return false;
      const seen = idsOf(first.records(topic));
      return ackedIds().every((eventId) => seen.has(eventId));
    }, 5000, 1);
    const killAt = performance.now();
    await first.stop();
    log(`  broker killed (SIGKILL)${quiet ? '' : ' (no quiet instant found within 5 s: killed with requests in flight)'}`);
    if (!quiet) report.note('the broker was killed with requests in flight; an acknowledgement it gave just then may be lost with its in-memory log');
    const firstRecords = first.records(topic);

    await sleep(DEAD_MS);
    second = await startKafkaMock({ topics: [topic], port: kafkaPort });
    const secondAt = performance.now();
    log(`  new broker on the same port ${kafkaPort}`);
    const recovered = await until(
      () => requests.some((r) => r.sent.startedAt > secondAt && is2xx(r.sent)),
      25_000,
      50,
    );
    const recoveredAt = performance.now();
    await sleep(2000);
    await stream.stop();
    log(`  stream stopped after ${requests.length} requests`);
    report.check(
      'the gateway publishes again once a broker is back',
      recovered,
      recovered ? `first 2xx ${Math.round(recoveredAt - secondAt)} ms after the new broker started` : 'no 2xx within 25 s',
    );

    // Every request answered, in time (as the gateway timed it: this process's own clock also
    // counts the time an answer waited for it to run, on a busy machine), with 2xx or 503.
    const limit = PUBLISH_TIMEOUT_MS + SLACK_MS;
    const unanswered = requests.filter((r) => r.sent.status === undefined);
    const answered = requests.filter((r) => r.sent.status !== undefined);
    const timings = await serverTimings(() => gateway.output(), answered.map((r) => r.key));
    const serverMs = answered.map((r) => timings.get(r.key)!.ms);
    const late = serverMs.filter((ms) => ms > limit);
    const unexpected = requests.filter((r) => r.sent.status !== undefined && !is2xx(r.sent) && r.sent.status !== 503);
    const all = requests.map((r) => r.sent);
    report.check(
      `every request answered within PUBLISH_TIMEOUT_MS + 1 s (${limit} ms)`,
      unanswered.length === 0 && late.length === 0,
      `${requests.length} requests, statuses ${formatCounts(countBy(all, statusOf))}, ` +
        `gateway p50 ${Math.round(percentile(serverMs, 50))} ms, max ${Math.round(Math.max(...serverMs))} ms ` +
        `(client max ${Math.round(Math.max(...all.map((s) => s.ms)))} ms), ${late.length} late, ${unanswered.length} unanswered`,
    );
    report.check('only 2xx or 503', unexpected.length === 0, `${unexpected.length} others`);

    const within = (r: Request, from: number, to: number) => r.sent.startedAt >= from && r.sent.endedAt <= to;
    const inStall = requests.filter((r) => within(r, stallAt + 50, stallEnd));
    const inDeath = requests.filter((r) => within(r, killAt, secondAt));
    const outageOk = (list: Request[]) => list.length > 0 && list.every((r) => r.sent.status === 503 && header(r.sent, 'retry-after'));
    report.check(
      'requests sent and answered during the outage: all 503 with Retry-After',
      outageOk(inStall) && outageOk(inDeath),
      `stall: ${inStall.length} (${formatCounts(countBy(inStall.map((r) => r.sent), statusOf))}, max ${Math.round(Math.max(0, ...inStall.map((r) => r.sent.ms)))} ms); ` +
        `dead: ${inDeath.length} (${formatCounts(countBy(inDeath.map((r) => r.sent), statusOf))}, max ${Math.round(Math.max(0, ...inDeath.map((r) => r.sent.ms)))} ms)`,
    );

    // Every acknowledged event is in the topic (the first broker's log or the second's).
    const acked = ackedIds();
    const found = () => {
      const seen = new Set([...idsOf(firstRecords), ...idsOf(second!.records(topic))]);
      return acked.filter((eventId) => seen.has(eventId));
    };
    await until(() => found().length === acked.length, 15_000, 100);
    const foundCount = found().length;
    report.check('every 2xx event id is in the topic', foundCount === acked.length, `${foundCount} of ${acked.length} found`);

    // Retry every non-2xx with the same key after the recovery: accepted once each.
    const failed = requests.filter((r) => !is2xx(r.sent));
    const retried: Array<{ request: Request; first?: Sent; again?: Sent; attempts: number }> = [];
    const queue = failed.slice();
    const retryOne = async (request: Request) => {
      let attempts = 0;
      let answer: Sent | undefined;
      while (attempts < 20) {
        attempts++;
        answer = await post(request.key, request.body);
        if (is2xx(answer)) break;
        await sleep(300);
      }
      const again = answer && is2xx(answer) ? await post(request.key, request.body) : undefined;
      retried.push({ request, first: answer, again, attempts });
    };
    await Promise.all(Array.from({ length: 16 }, async () => {
      for (let next = queue.shift(); next; next = queue.shift()) await retryOne(next);
    }));
    const acceptedOnce = retried.filter(
      (r) =>
        r.first &&
        is2xx(r.first) &&
        r.again &&
        is2xx(r.again) &&
        header(r.again, 'idempotent-replayed') === 'true' &&
        header(r.again, 'x-event-id') === header(r.first, 'x-event-id'),
    );
    const replayedAtFirst = retried.filter((r) => r.first && header(r.first, 'idempotent-replayed') === 'true').length;
    report.check(
      'after recovery, each non-2xx retried with its key is accepted once (then replayed with the same event id)',
      acceptedOnce.length === failed.length,
      `${failed.length} retried, ${acceptedOnce.length} accepted once, ${replayedAtFirst} of them answered as a replay at once, ` +
        `attempts max ${Math.max(0, ...retried.map((r) => r.attempts))}`,
    );
    const retriedIds = retried.filter((r) => r.first && is2xx(r.first)).map((r) => header(r.first!, 'x-event-id')!);
    await until(() => {
      const seen = idsOf(second!.records(topic));
      return retriedIds.every((eventId) => seen.has(eventId));
    }, 15_000, 100);
    const seenAfter = idsOf(second.records(topic));
    const retriedFound = retriedIds.filter((eventId) => seenAfter.has(eventId) || idsOf(firstRecords).has(eventId)).length;
    report.check('the retried events are in the topic', retriedFound === retriedIds.length, `${retriedFound} of ${retriedIds.length}`);

    // Duplicates: a record that reached the broker although its request got a 503 (a deadline
    // is not a rollback), then published again by the retry. They must share the key.
    const events = [...firstRecords, ...second.records(topic)].map(eventOfRecord).filter((e) => e !== undefined);
    const { groups, extra } = duplicatesBySeq(events);
    const keyOf = new Map(requests.map((r) => [r.seq, r.key]));
    const badKeys = events.filter((e) => e.seq !== undefined && e.idempotencyKey !== keyOf.get(e.seq)).length;
    const missing = requests.filter((r) => !groups.has(r.seq)).length;
    report.check(
      'every key is in the topic at least once; duplicates carry the same idempotencyKey',
      missing === 0 && badKeys === 0,
      `${groups.size} of ${requests.length} keys present, ${extra} duplicate record(s), ${badKeys} with another key`,
    );

    report.row = {
      sent: `${requests.length} + ${retried.reduce((n, r) => n + r.attempts, 0)} retries + ${retried.filter((r) => r.again).length} replay checks`,
      acknowledged: `${acked.length} + ${acceptedOnce.length} retried`,
      found: `${foundCount + retriedFound}/${acked.length + retriedIds.length}`,
      duplicated: String(extra),
      other: `503 stall ${inStall.length}, 503 dead ${inDeath.length}`,
    };
  } catch (error) {
    report.crashed(error);
  } finally {
    await cleanup.run();
  }
  return report;
}
