// npm run bench:registry — registry size (issue 12): 100,000 registered triggers hit uniformly at
// random against one hot trigger, on one gateway in one run, rounds alternating. Redis mode with
// the file sink, on a redis-server of its own (so its HGET count is the gateways' alone):
// small JSON, bearer token, a unique Idempotency-Key per request. Also 1,000 unknown paths hit
// at random (404): the negative cache. Prints a markdown table, the ratio against the goal
// (within 15% of the hot trigger), and writes bench/results/registry-size.md.
//
//   --seconds 6  --rounds 2  --connections 32  --triggers 100000
//   --script <path to main.js>  (another build, e.g. the previous version, for before/after)
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import pino from 'pino';
import { RedisConnection } from '../src/redis/connection';
import { toStoredTrigger } from '../src/registry/records';
import { RedisRegistry } from '../src/registry/redis';
import { cpuTimeMs, sampleRss, startServer, type Server } from './processes';
import { option } from './args';

const ROOT = join(__dirname, '..', '..');
const TOKEN = 'bench-token-0123456789';
const PREFIX = 'igw-bench-registry:';
const HOT = 'hot';
const UNKNOWN_PATHS = 1000;

interface Options {
  seconds: number;
  rounds: number;
  connections: number;
  triggers: number;
  script: string;
}

interface Row {
  round: number;
  scenario: string;
  rps: number;
  p50: number;
  p99: number;
  ok: number;
  other: number;
  errors: number;
  cpuMsPer1000: number;
  hgetPer1000: number;
  rssMiB: number;
}

function parseArgs(argv: string[]): Options {
  const get = (name: string) => option(argv, name);
  return {
    seconds: Number(get('seconds') ?? 6),
    rounds: Number(get('rounds') ?? 2),
    connections: Number(get('connections') ?? 32),
    triggers: Number(get('triggers') ?? 100_000),
    script: get('script') ?? join(ROOT, 'dist', 'main.js'),
  };
}

const triggerPath = (i: number) => `t-${i}`;
const unknownPath = (i: number) => `unknown-${i}`;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A redis-server of the bench's own; resolves once it answers. */
async function startRedis(): Promise<{ url: string; child: ChildProcess; client: Redis }> {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  child.once('error', (error) => {
    throw new Error(`redis-server could not start (${error.message}); install it with: apt-get install -y redis-server`);
  });
  const url = `redis://127.0.0.1:${port}/0`;
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => 50 });
  client.on('error', () => undefined);
  for (let attempt = 0; ; attempt += 1) {
    try {
      if (client.status === 'wait') await client.connect();
      await client.ping();
      return { url, child, client };
    } catch (error) {
      if (attempt > 200) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** The triggers, written through the registry itself (its write script), many at a time. */
async function seed(url: string, count: number): Promise<void> {
  const logger = pino({ level: 'silent' });
  const connection = new RedisConnection({ target: url, timeoutMs: 5000 }, logger);
  await connection.start();
  const registry = new RedisRegistry(connection, PREFIX, logger);
  const trigger = (i: number) =>
    toStoredTrigger({ workflowId: `wf-${i}`, workspaceId: `ws-${i % 100}`, deployed: true, auth: { token: TOKEN } });
  await registry.triggers.put(HOT, trigger(-1));
  for (let start = 0; start < count; start += 2000) {
    const end = Math.min(count, start + 2000);
    await Promise.all(Array.from({ length: end - start }, (_, k) => registry.triggers.put(triggerPath(start + k), trigger(start + k))));
  }
  await registry.close();
  await connection.close();
}

async function hgetCalls(redis: Redis): Promise<number> {
  const stats = await redis.info('commandstats');
  const match = stats.match(/cmdstat_hget:calls=(\d+)/);
  return match ? Number(match[1]) : 0;
}

/** GET of each path once: the gateway looks each one up (and caches it) without publishing. */
async function warm(port: number, paths: (i: number) => string, count: number, connections: number): Promise<void> {
  let i = 0;
  await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections,
    amount: count,
    requests: [{ method: 'GET', setupRequest: (req: autocannon.Request) => ({ ...req, path: `/api/webhooks/trigger/${paths(i++ % count)}` }) }],
  });
}

async function drive(server: Server, redis: Redis, round: number, scenario: string, pathFor: () => string, options: Options, ids: { next: number }): Promise<Row> {
  const pid = server.child.pid!;
  const hgetsBefore = await hgetCalls(redis);
  const cpuBefore = cpuTimeMs(pid);
  const rss = sampleRss(pid);
  const result = await autocannon({
    url: `http://127.0.0.1:${server.port}`,
    connections: options.connections,
    duration: options.seconds,
    requests: [
      {
        method: 'POST',
        setupRequest: (req: autocannon.Request) => {
          const n = (ids.next += 1);
          return {
            ...req,
            path: `/api/webhooks/trigger/${pathFor()}`,
            headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'idempotency-key': `k-${n}` },
            body: JSON.stringify({ event: 'order.created', id: `o-${n}`, data: { amount: 12.5 } }),
          };
        },
      },
    ],
  });
  const requests = Math.max(1, result['2xx'] + result.non2xx);
  return {
    round,
    scenario,
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    ok: result['2xx'],
    other: result.non2xx,
    errors: result.errors + result.timeouts,
    cpuMsPer1000: Math.round(((cpuTimeMs(pid) - cpuBefore) / requests) * 1000),
    hgetPer1000: Math.round((((await hgetCalls(redis)) - hgetsBefore) / requests) * 1000),
    rssMiB: rss.stop(),
  };
}

function table(rows: Row[]): string {
  const lines = [
    '| round | scenario | req/s | p50 ms | p99 ms | CPU ms / 1000 req | HGET / 1000 req | peak RSS MiB | 2xx | other | errors |',
    '|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    lines.push(`| ${r.round} | ${r.scenario} | ${r.rps} | ${r.p50} | ${r.p99} | ${r.cpuMsPer1000} | ${r.hgetPer1000} | ${r.rssMiB} | ${r.ok} | ${r.other} | ${r.errors} |`);
  }
  return lines.join('\n');
}

async function heapUsedMiB(port: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('nodejs_heap_size_used_bytes'));
  return line ? Math.round(Number(line.split(' ').pop()) / 1024 / 1024) : Number.NaN;
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  const work = mkdtempSync(join(tmpdir(), 'igw-bench-registry-'));
  const redis = await startRedis();
  const servers: Server[] = [];
  const rows: Row[] = [];
  try {
    process.stderr.write(`bench:registry: writing ${options.triggers} triggers\n`);
    const seedStarted = performance.now();
    await seed(redis.url, options.triggers);
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    const env = () => ({
      REDIS_URL: redis.url,
      REDIS_PREFIX: PREFIX,
      EVENTS_DIR: join(work, 'events'),
      RATE_LIMIT_DEFAULT: '1000000/60',
      RATE_LIMIT_WORKSPACE: '1000000/60',
    });
    // One gateway for every scenario, so the access pattern is the only difference.
    const gateway = await startServer(process.execPath, options.script, env());
    servers.push(gateway);
    process.stderr.write(`bench:registry: warming the cache (GET of each of ${options.triggers} paths)\n`);
    const warmStarted = performance.now();
    await warm(gateway.port, triggerPath, options.triggers, options.connections);
    const warmSeconds = (performance.now() - warmStarted) / 1000;
    await warm(gateway.port, unknownPath, UNKNOWN_PATHS, options.connections);

    const ids = { next: Date.now() * 1000 };
    const random = (n: number) => Math.floor(Math.random() * n);
    const scenarios: Array<[string, () => string]> = [
      ['one hot trigger', () => HOT],
      [`${options.triggers} triggers at random`, () => triggerPath(random(options.triggers))],
    ];
    // JIT and pools warm before anything is measured; not reported.
    for (const [, pathFor] of scenarios) await drive(gateway, redis.client, 0, 'warm-up', pathFor, { ...options, seconds: 2 }, ids);
    for (let round = 1; round <= options.rounds; round += 1) {
      process.stderr.write(`bench:registry: round ${round}\n`);
      // Alternating which goes first, so neither always follows the other.
      for (const [name, pathFor] of round % 2 === 1 ? scenarios : [...scenarios].reverse()) {
        rows.push(await drive(gateway, redis.client, round, name, pathFor, options, ids));
      }
    }
    rows.push(await drive(gateway, redis.client, options.rounds, `${UNKNOWN_PATHS} unknown paths at random (404)`, () => unknownPath(random(UNKNOWN_PATHS)), options, ids));
    const heapMiB = await heapUsedMiB(gateway.adminPort ?? gateway.port);
    const hotRps = mean(rows.filter((r) => r.scenario === 'one hot trigger').map((r) => r.rps));
    const spreadRps = mean(rows.filter((r) => r.scenario.endsWith('triggers at random')).map((r) => r.rps));
    const ratio = spreadRps / hotRps;
    const report = [
      `# Registry size ${new Date().toISOString()}`,
      '',
      `${options.script.replace(ROOT, '.')}, node ${process.versions.node}; ${options.connections} connections, ${options.seconds} s per cell, ` +
        `${options.rounds} rounds alternating, autocannon on loopback. Redis mode (a redis-server of the bench's own) with the file sink; ` +
        `2 cores shared by load, gateways and Redis (and, on a shared machine, whatever else runs).`,
      `One gateway for all scenarios. ${options.triggers} triggers written in ${seedSeconds.toFixed(1)} s; its cache warmed by one GET per path in ` +
        `${warmSeconds.toFixed(1)} s (and one per unknown path), then 2 s of each scenario, not reported.`,
      '',
      table(rows),
      '',
      `${options.triggers} triggers at random / one hot trigger: ${ratio.toFixed(2)} (goal ≥ 0.85: ${ratio >= 0.85 ? 'met' : 'not met'})`,
      `Gateway heap in use at the end: ${heapMiB} MiB (nodejs_heap_size_used_bytes; garbage not yet collected included).`,
      '',
    ].join('\n');
    mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
    writeFileSync(join(ROOT, 'bench', 'results', 'registry-size.md'), report);
    process.stdout.write(report);
  } finally {
    for (const server of servers) await server.stop();
    redis.client.disconnect();
    redis.child.kill('SIGKILL');
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
