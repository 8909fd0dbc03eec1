/**
 * Scenario 2: the gateway is SIGKILLed under load and restarted on the same port, Redis prefix
 * and broker. The client retries every non-2xx and every connection error with the same
 * Idempotency-Key (bounded), as a webhook sender does.
 *
 * A request whose record the broker acknowledged but whose key was not marked done before the
 * kill stays "in flight" until its lease (PUBLISH_TIMEOUT_MS + 10 s) runs out; the client's
 * retries meanwhile get 409, then one goes through and publishes again: a duplicate, which
 * must carry the same idempotencyKey so consumers can drop it.
 */
import { Agent } from 'node:http';
import { startKafkaMock } from '../helpers/kafka-mock';
import { reservePort } from '../helpers/ports';
import { deleteKeys, requireRedis, uniquePrefix, REDIS_TEST_URL } from '../helpers/redis';
import type { RunningGateway } from '../helpers/server';
import { duplicatesBySeq, eventOfRecord, gatewayWith, runId, TRIGGER_PATH, workDir } from './fixtures';
import { Cleanup, countBy, formatCounts, header, is2xx, log, Report, send, sleep, statusOf, until, waitReady, type Sent } from './lib';

const PUBLISH_TIMEOUT_MS = 1500;
const WORKERS = 32;
const KILL_AFTER_MS = 2500;
const DOWN_MS = 500;
const NEW_KEYS_FOR_MS = 6000;
const MAX_ATTEMPTS = 100;
/** No key is retried past this point (the lease of a killed request is 11.5 s). */
const GIVE_UP_AFTER_MS = 40_000;

interface KeyOutcome {
  seq: number;
  key: string;
  attempts: Sent[];
  final?: Sent;
}

export async function gatewayKillScenario(): Promise<Report> {
  const report = new Report('2. gateway SIGKILL');
  const cleanup = new Cleanup();
  const agent = new Agent({ keepAlive: true, maxSockets: WORKERS });
  cleanup.add('agent', () => agent.destroy());
  try {
    const id = runId();
    const topic = `rel.kill.${id}`;
    const { triggersFile } = workDir(cleanup, 'kill');
    const redis = await requireRedis();
    cleanup.add('redis client', () => redis.quit());
    const prefix = uniquePrefix('rel-kill');
    cleanup.add('delete prefixed keys', () => deleteKeys(redis, prefix));
    const kafka = await startKafkaMock({ topics: [topic] });
    cleanup.add('kafka mock', () => kafka.stop());

    // The restarted gateway listens on the same port: reserved, never one the kernel hands out (helpers/ports.ts).
    const reserved = await reservePort();
    cleanup.add('gateway port', () => reserved.release());
    const port = reserved.port;
    const env = {
      PORT: String(port),
      REDIS_URL: REDIS_TEST_URL,
      REDIS_PREFIX: prefix,
      KAFKA_BROKERS: kafka.brokers,
      KAFKA_IDEMPOTENT: 'false',
      TOPIC_TRIGGERS: topic,
      PUBLISH_TIMEOUT_MS: String(PUBLISH_TIMEOUT_MS),
      TRIGGERS_FILE: triggersFile,
    };
    let gateway: RunningGateway = await gatewayWith(cleanup, env);
    const base = gateway.url;
    if (!(await waitReady(gateway.adminUrl))) throw new Error('gateway not ready within 20 s');

    const outcomes: KeyOutcome[] = [];
    let nextSeq = 0;
    const started = performance.now();
    const worker = async () => {
      while (performance.now() - started < NEW_KEYS_FOR_MS) {
        const seq = nextSeq++;
        const outcome: KeyOutcome = { seq, key: `rel2-${id}-${seq}`, attempts: [] };
        outcomes.push(outcome);
        const body = JSON.stringify({ seq, scenario: 'gateway-kill' });
        while (outcome.attempts.length < MAX_ATTEMPTS && performance.now() - started < GIVE_UP_AFTER_MS) {
          const sent = await send(base, `/api/webhooks/trigger/${TRIGGER_PATH}`, {
            agent,
            headers: { 'content-type': 'application/json', 'idempotency-key': outcome.key },
            body,
            timeoutMs: PUBLISH_TIMEOUT_MS + 5000,
          });
          outcome.attempts.push(sent);
          if (is2xx(sent)) {
            outcome.final = sent;
            break;
          }
          // Retry-After (1 s for 409, 2 s for 503) is honoured up to 1 s; connection errors after 250 ms.
          const retryAfter = Number(header(sent, 'retry-after'));
          await sleep(Number.isFinite(retryAfter) && retryAfter > 0 ? Math.min(retryAfter * 1000, 1000) : 250);
        }
      }
    };
    log(`  ${WORKERS} retrying clients started`);
    const load = Promise.all(Array.from({ length: WORKERS }, worker));

    await sleep(KILL_AFTER_MS);
    const inFlightAtKill = outcomes.filter((o) => !o.final).length;
    gateway.child.kill('SIGKILL');
    await gateway.exited;
    log(`  gateway killed (SIGKILL) with ${inFlightAtKill} keys in flight, ${outcomes.length} keys started`);
    await sleep(DOWN_MS);
    gateway = await gatewayWith(cleanup, env);
    log('  gateway restarted on the same port');
    await load;
    const elapsed = performance.now() - started;
    log(`  clients done after ${(elapsed / 1000).toFixed(1)} s`);

    const attempts = outcomes.flatMap((o) => o.attempts);
    const finals = outcomes.filter((o) => o.final);
    const notAccepted = outcomes.filter((o) => !o.final);
    report.check(
      'every key is acknowledged in the end (bounded retries)',
      notAccepted.length === 0,
      `${outcomes.length} keys, ${attempts.length} attempts (${formatCounts(countBy(attempts, statusOf))}), ` +
        `${notAccepted.length} never acknowledged, most attempts for one key ${Math.max(...outcomes.map((o) => o.attempts.length))}`,
    );

    // Every 2xx event id (first acknowledgements and replays, which name the original) is in the topic.
    const ackedIds = [...new Set(finals.map((o) => header(o.final!, 'x-event-id')!))];
    await until(() => {
      const seen = new Set(kafka.records(topic).map((r) => r.headers.ce_id));
      return ackedIds.every((eventId) => seen.has(eventId));
    }, 15_000, 100);
    await sleep(500); // a duplicate may trail its twin
    const records = kafka.records(topic);
    const seen = new Set(records.map((r) => r.headers.ce_id));
    const found = ackedIds.filter((eventId) => seen.has(eventId)).length;
    report.check('every 2xx event id is in the topic', found === ackedIds.length, `${found} of ${ackedIds.length} found`);

    const events = records.map(eventOfRecord).filter((e) => e !== undefined);
    const { groups, extra } = duplicatesBySeq(events);
    const keyOf = new Map(outcomes.map((o) => [o.seq, o.key]));
    const missing = outcomes.filter((o) => !groups.has(o.seq)).length;
    const foreign = events.filter((e) => e.seq === undefined || !keyOf.has(e.seq)).length;
    let twinsWithAnotherKey = 0;
    for (const [seq, group] of groups) {
      if (group.some((e) => e.idempotencyKey !== keyOf.get(seq))) twinsWithAnotherKey++;
    }
    const duplicatedKeys = [...groups.values()].filter((g) => g.length > 1).length;
    report.check(
      'every key is in the topic at least once',
      missing === 0 && foreign === 0,
      `${groups.size} of ${outcomes.length} keys present, ${records.length} records, ${foreign} records of no key sent`,
    );
    report.check(
      'every duplicate carries the same idempotencyKey as its twin',
      twinsWithAnotherKey === 0,
      `${extra} duplicate record(s) over ${duplicatedKeys} key(s) (window: broker ack → key marked done, at the kill); ${twinsWithAnotherKey} with another key`,
    );
    const replays = finals.filter((o) => header(o.final!, 'idempotent-replayed') === 'true').length;
    const connectionErrors = attempts.filter((a) => a.status === undefined).length;
    report.row = {
      sent: `${outcomes.length} keys, ${attempts.length} attempts`,
      acknowledged: `${finals.length} (${replays} replays)`,
      found: `${found}/${ackedIds.length}`,
      duplicated: String(extra),
      other: `conn errors ${connectionErrors}, 409 ${attempts.filter((a) => a.status === 409).length}, 503 ${attempts.filter((a) => a.status === 503).length}`,
    };
  } catch (error) {
    report.crashed(error);
  } finally {
    await cleanup.run();
  }
  return report;
}
