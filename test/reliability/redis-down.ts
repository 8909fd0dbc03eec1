/**
 * Scenario 3: Redis dies under a steady stream (a redis-server of our own on its own port,
 * SIGKILLed and started again; the shared one is never touched). The gateway runs with that
 * Redis and the file sink, IDEMPOTENCY_ON_STORE_ERROR at its default `accept`.
 *
 * Documented behaviour while Redis is down: every request is still answered within
 * REDIS_TIMEOUT_MS-ish; rate limiting lets traffic through and idempotency accepts and
 * publishes (at-least-once), each counted in igw_store_errors_total{store,action="accepted"};
 * /readyz stays 200 and reports redis down in its body. Once Redis is back, dedupe works again
 * and nothing more is counted.
 *
 * The restarted server loads a snapshot taken (SAVE) just before the kill, as a Redis with
 * persistence would: one that comes back empty has lost the trigger registry too, and every
 * trigger would be a 404 until it is seeded again (TRIGGERS_FILE is read at start only).
 */
import { Agent } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Redis from 'ioredis';
import { serverTimings } from '../helpers/gateway-client';
import { RedisServerProcess, uniquePrefix } from '../helpers/redis';
import { gatewayWith, runId, SteadyStream, TRIGGER_PATH, workDir } from './fixtures';
import { Cleanup, countBy, formatCounts, header, is2xx, log, metric, percentile, Report, send, sleep, statusOf, waitReady, type Sent } from './lib';

const INTERVAL_MS = 25; // 40 requests/s
const UP_BEFORE_MS = 2500;
const DOWN_MS = 3000;
const UP_AFTER_MS = 3000;
/**
 * Every 5th request repeats the key (and body) of the request 41 before it (about a second
 * earlier); 41 is no multiple of 5, so the request repeated is never a repeat itself.
 */
const REPEAT_EVERY = 5;
const REPEAT_DISTANCE = 41;
const MAX_LATENCY_MS = 1000;

interface Request {
  n: number;
  seq: number;
  repeat: boolean;
  sent: Sent;
}

/** Starts redis-server with its working folder (where SAVE writes dump.rdb and a start loads it) in `dir`. */
async function startRedisIn(dir: string, start: () => Promise<unknown>): Promise<void> {
  const cwd = process.cwd();
  process.chdir(dir);
  try {
    await start();
  } finally {
    process.chdir(cwd);
  }
}

export async function redisDownScenario(): Promise<Report> {
  const report = new Report('3. Redis down');
  const cleanup = new Cleanup();
  const agent = new Agent({ keepAlive: true, maxSockets: 128 });
  cleanup.add('agent', () => agent.destroy());
  try {
    const id = runId();
    const { dir, triggersFile } = workDir(cleanup, 'redis');
    const eventsDir = join(dir, 'events');
    const server = await RedisServerProcess.reserve();
    cleanup.add(`redis-server on ${server.port}`, () => server.dispose());
    await startRedisIn(dir, () => server.start());

    const gateway = await gatewayWith(cleanup, {
      REDIS_URL: server.url,
      REDIS_PREFIX: uniquePrefix('rel-redis'), // a throw-away server, but the same habit
      EVENTS_DIR: eventsDir,
      TRIGGERS_FILE: triggersFile,
    });
    if (!(await waitReady(gateway.adminUrl))) throw new Error('gateway not ready within 20 s');

    const storeErrors = async () => ({
      idempotency: await metric(gateway.adminUrl, 'igw_store_errors_total', { store: 'idempotency', action: 'accepted' }),
      ratelimit: await metric(gateway.adminUrl, 'igw_store_errors_total', { store: 'ratelimit', action: 'accepted' }),
      all: await metric(gateway.adminUrl, 'igw_store_errors_total'),
    });

    const requests: Request[] = [];
    // X-Request-Id names each request (n) for the gateway's access log, which times it.
    const requestId = (n: number) => `rel3-${id}-n${n}`;
    const post = (seq: number, n: number) =>
      send(gateway.url, `/api/webhooks/trigger/${TRIGGER_PATH}`, {
        agent,
        headers: { 'content-type': 'application/json', 'idempotency-key': `rel3-${id}-${seq}`, 'x-request-id': requestId(n) },
        body: JSON.stringify({ seq, scenario: 'redis-down' }),
        timeoutMs: 10_000,
      });
    const stream = new SteadyStream(
      async (n) => {
        const repeat = n % REPEAT_EVERY === REPEAT_EVERY - 1 && n >= REPEAT_DISTANCE;
        const seq = repeat ? n - REPEAT_DISTANCE : n;
        const sent = await post(seq, n);
        requests.push({ n, seq, repeat, sent });
      },
      INTERVAL_MS,
      2000,
    );

    const before = await storeErrors();
    stream.start();
    log('  steady stream of 40 requests/s started (every 5th repeats a key from 1 s before)');
    await sleep(UP_BEFORE_MS);

    const admin = new Redis(server.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    admin.on('error', () => undefined);
    await admin.connect();
    await admin.save();
    admin.disconnect();
    const killAt = performance.now();
    await server.stop();
    log('  redis-server killed (SIGKILL) after SAVE');

    await sleep(DOWN_MS / 2);
    const readyWhileDown = await send(gateway.adminUrl, '/readyz', { method: 'GET', timeoutMs: 3000 });
    await sleep(DOWN_MS / 2);
    const restartAt = performance.now();
    await startRedisIn(dir, () => server.start());
    log('  redis-server started again on the same port (from the snapshot)');
    const ready = await waitReady(gateway.adminUrl, 10_000);
    const readyAt = performance.now();
    await sleep(1000);
    const recovered = await storeErrors();
    await sleep(UP_AFTER_MS - 1000);
    await stream.stop();
    const after = await storeErrors();
    log(`  stream stopped after ${requests.length} requests`);

    // Answered, quickly, and (fail-open) accepted.
    // As the gateway timed them: this process's own clock also counts the time an answer
    // waited for it to run, on a busy machine.
    const all = requests.map((r) => r.sent);
    const unanswered = all.filter((s) => s.status === undefined).length;
    const answered = requests.filter((r) => r.sent.status !== undefined);
    const timings = await serverTimings(() => gateway.output(), answered.map((r) => requestId(r.n)));
    const serverMs = answered.map((r) => timings.get(requestId(r.n))!.ms);
    const maxMs = Math.max(...serverMs);
    report.check(
      `every request answered within ${MAX_LATENCY_MS} ms while Redis died and came back`,
      unanswered === 0 && maxMs < MAX_LATENCY_MS,
      `${all.length} requests, gateway p50 ${Math.round(percentile(serverMs, 50))} ms, p99 ${Math.round(percentile(serverMs, 99))} ms, ` +
        `max ${Math.round(maxMs)} ms (client max ${Math.round(Math.max(...all.map((s) => s.ms)))} ms), ${unanswered} unanswered`,
    );
    const non2xx = all.filter((s) => !is2xx(s));
    report.check('every request accepted (rate limits and idempotency fail open)', non2xx.length === 0, `statuses ${formatCounts(countBy(all, statusOf))}`);
    report.check(
      '/readyz stays 200 while Redis is down, reporting it in its body, and reports it up again after',
      readyWhileDown.status === 200 && readyWhileDown.body.includes('"redis":"down"') && ready,
      `while down: ${readyWhileDown.status} ${readyWhileDown.body.slice(0, 120)}; ready again ${ready ? `${Math.round(readyAt - restartAt)} ms after the restart` : 'never (10 s)'}`,
    );

    // Counted as documented: one idempotency store error per request that could not claim its
    // key, and one rate-limit store error per bucket (trigger and workspace) per request.
    const inside = requests.filter((r) => r.sent.startedAt >= killAt + 100 && r.sent.endedAt <= restartAt);
    const around = requests.filter((r) => r.sent.endedAt >= killAt - 1000 && r.sent.startedAt <= readyAt + 1000);
    const idempotencyDelta = recovered.idempotency - before.idempotency;
    const ratelimitDelta = recovered.ratelimit - before.ratelimit;
    report.check(
      'igw_store_errors_total counts each request let through while Redis was down',
      idempotencyDelta >= inside.length && idempotencyDelta <= around.length && ratelimitDelta >= 2 * inside.length && ratelimitDelta <= 2 * around.length,
      `${inside.length} requests sent and answered while down; {store="idempotency",action="accepted"} +${idempotencyDelta}, ` +
        `{store="ratelimit",action="accepted"} +${ratelimitDelta}, all store errors +${recovered.all - before.all} (bounds: ${inside.length}..${around.length} per store and bucket)`,
    );
    report.check(
      'no store errors once Redis is back',
      after.all === recovered.all,
      `+${after.all - recovered.all} in the last ${((UP_AFTER_MS - 1000) / 1000).toFixed(0)} s`,
    );

    // Dedupe: a repeated key is a replay with the first event id while Redis is up (before the
    // kill, and again after it is back); while it is down a repeat is published again (at least once).
    const firstOf = new Map<number, Sent>();
    for (const r of requests.slice().sort((a, b) => a.n - b.n)) if (!r.repeat) firstOf.set(r.seq, r.sent);
    const replayed = (r: Request) => {
      const original = firstOf.get(r.seq);
      return (
        original !== undefined &&
        header(r.sent, 'idempotent-replayed') === 'true' &&
        header(r.sent, 'x-event-id') === header(original, 'x-event-id')
      );
    };
    const repeatsBefore = requests.filter((r) => r.repeat && r.sent.endedAt < killAt - 100);
    const repeatsAfter = requests.filter((r) => {
      const original = firstOf.get(r.seq);
      return r.repeat && original !== undefined && original.startedAt > readyAt + 1000;
    });
    const repeatsDown = requests.filter((r) => r.repeat && r.sent.startedAt >= killAt + 100 && r.sent.endedAt <= restartAt);
    const finalKey = `rel3-${id}-final`;
    const finalFirst = await send(gateway.url, `/api/webhooks/trigger/${TRIGGER_PATH}`, {
      headers: { 'content-type': 'application/json', 'idempotency-key': finalKey },
      body: '{"final":true}',
    });
    const finalAgain = await send(gateway.url, `/api/webhooks/trigger/${TRIGGER_PATH}`, {
      headers: { 'content-type': 'application/json', 'idempotency-key': finalKey },
      body: '{"final":true}',
    });
    const finalReplayed =
      is2xx(finalFirst) && header(finalAgain, 'idempotent-replayed') === 'true' && header(finalAgain, 'x-event-id') === header(finalFirst, 'x-event-id');
    report.check(
      'dedupe works before the outage and again after Redis is back',
      repeatsBefore.length > 0 && repeatsBefore.every(replayed) && repeatsAfter.length > 0 && repeatsAfter.every(replayed) && finalReplayed,
      `repeats replayed: before ${repeatsBefore.filter(replayed).length}/${repeatsBefore.length}, ` +
        `after ${repeatsAfter.filter(replayed).length}/${repeatsAfter.length}, fresh key sent twice after: ${finalReplayed ? 'replayed' : `${finalAgain.status} ${header(finalAgain, 'idempotent-replayed') ?? ''}`}; ` +
        `while down ${repeatsDown.filter((r) => header(r.sent, 'idempotent-replayed') !== 'true').length}/${repeatsDown.length} repeats published again (at least once)`,
    );

    // Every acknowledged (non-replayed) event is in the file sink.
    const file = join(eventsDir, 'workflow.triggers.ndjson');
    const lines = existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
    const published = lines.map((line) => JSON.parse(line) as { value: { id: string; data: { idempotencyKey: string } } });
    const publishedIds = new Set(published.map((p) => p.value.id));
    const ackedIds = [...new Set(all.filter(is2xx).map((s) => header(s, 'x-event-id')!))];
    const found = ackedIds.filter((eventId) => publishedIds.has(eventId)).length;
    report.check('every 2xx event id is in the sink', found === ackedIds.length, `${found} of ${ackedIds.length}`);
    const perKey = countBy(
      published.filter((p) => p.value.data.idempotencyKey.startsWith(`rel3-${id}-`) && !p.value.data.idempotencyKey.endsWith('-final')),
      (p) => p.value.data.idempotencyKey,
    );
    const duplicated = Object.values(perKey).reduce((n, count) => n + count - 1, 0);

    report.row = {
      sent: String(requests.length),
      acknowledged: `${all.filter(is2xx).length} (${all.filter((s) => header(s, 'idempotent-replayed') === 'true').length} replays)`,
      found: `${found}/${ackedIds.length}`,
      duplicated: String(duplicated),
      other: `max ${Math.round(maxMs)} ms; store errors idem +${idempotencyDelta}, rl +${ratelimitDelta}`,
    };
  } catch (error) {
    report.crashed(error);
  } finally {
    await cleanup.run();
  }
  return report;
}
