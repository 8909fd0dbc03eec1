// npm run bench:profile -- --target redis-kafka --node 24: one target of the goals' scenario
// (small JSON, 64 connections) under V8's CPU profiler, after a warm-up of --warmup-requests
// (50,000) answered requests; prints how many µs of the main thread each request costs, by
// where they go, and the costliest functions.
// --inclusive a,b: also the µs per request spent under scripts whose path contains a (or b).
// --save <file>: keeps the .cpuprofile (open it in Chrome DevTools).
// --baseline <dist dir>: --target baseline-embedded / baseline-redis-kafka profile that build.
// --heap: V8's sampling heap profiler instead: the bytes each request allocates, by where.
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startKafkaMock } from '../test/helpers/kafka-mock';
import { option } from './args';
import { summarise } from './cpu-profile';
import { summariseHeap } from './heap-profile';
import { HEADLINE } from './goals';
import { PROFILE_TARGETS } from './profile-targets';
import { drive, warmUp, WARM_UP_REQUESTS } from './load';
import { nodeBinaries } from './node-binaries';
import { startServer } from './processes';
import { BENCH_REGISTRY, SCENARIOS } from './scenarios';
import { deleteBenchKeys, requireRedis, targets } from './targets';

const argument = (name: string, fallback: string) => option(process.argv, name) ?? fallback;

async function waitForFile(file: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(file)) {
    if (Date.now() > deadline) throw new Error(`the server wrote no profile to ${file}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function main(): Promise<void> {
  const targetName = PROFILE_TARGETS[argument('target', 'redis-kafka')];
  if (!targetName) throw new Error(`--target is one of ${Object.keys(PROFILE_TARGETS).join(', ')}`);
  const seconds = Number(argument('seconds', '10'));
  const connections = Number(argument('connections', '64'));
  const [node] = nodeBinaries([argument('node', '24')]);
  const scenario = SCENARIOS.find((s) => s.name === HEADLINE)!;
  const inclusiveOf = option(process.argv, 'inclusive')?.split(',') ?? [];
  const heap = process.argv.includes('--heap');

  const redis = await requireRedis();
  const kafka = await startKafkaMock({ topics: ['bench-profile'], rttMs: 5 });
  const work = mkdtempSync(join(tmpdir(), 'igw-profile-'));
  const registryFile = join(work, 'registry.json');
  writeFileSync(registryFile, JSON.stringify(BENCH_REGISTRY));
  const target = targets(work, registryFile, kafka, option(process.argv, 'baseline')).find((t) => t.name === targetName);
  if (!target) throw new Error(`${targetName}: give --baseline <dist dir>`);
  const profileFile = join(work, 'main-thread.cpuprofile');
  const server = await startServer(node.path, target.script, {
    ...target.env(),
    NODE_OPTIONS: `--require ${JSON.stringify(join(__dirname, 'profile-preload.js'))}`, // quoted: the path may hold spaces
    BENCH_PROFILE_FILE: profileFile,
    BENCH_PROFILE_HEAP: heap ? '1' : '0',
  });
  try {
    const firstId = Date.now(); // below 2^53 and printed exactly by wrk's Lua
    const warmUpRequests = Number(argument('warmup-requests', String(WARM_UP_REQUESTS)));
    await warmUp(server.port, scenario, connections, firstId + 20_000_000, warmUpRequests); // not profiled
    server.child.kill('SIGUSR2');
    const load = await drive(server.port, scenario, seconds, connections, firstId + 10_000_000);
    server.child.kill('SIGUSR2');
    await waitForFile(profileFile, 30_000);
    const saveAs = option(process.argv, 'save');
    if (saveAs) copyFileSync(profileFile, saveAs);
    const requests = load.ok + load.non2xx;
    if (heap) {
      process.stdout.write(heapReport(JSON.parse(readFileSync(profileFile, 'utf8')), requests, `${target.name}, ${node.label}, "${scenario.name}", ${connections} connections, ${seconds} s: ${load.rps} req/s`));
      return;
    }
    const summary = summarise(JSON.parse(readFileSync(profileFile, 'utf8')), inclusiveOf);
    const busyUs = summary.categories.filter(([name]) => name !== 'idle').reduce((sum, [, us]) => sum + us, 0);
    const perRequest = (us: number) => (us / requests).toFixed(1);
    const lines = [
      `# CPU profile: ${target.name}, ${node.label}, "${scenario.name}", ${connections} connections, ${seconds} s`,
      '',
      `${load.rps} req/s, p99 ${load.p99} ms, ${requests} requests (${load.non2xx} non-2xx); main thread busy ${((busyUs / summary.totalUs) * 100).toFixed(0)}% of the time, ${perRequest(busyUs)} µs per request.`,
      '',
      '| where | µs per request | share of the profiled time |',
      '|---|---:|---:|',
      ...summary.categories.filter(([, us]) => us / requests >= 0.1).map(([name, us]) => `| ${name} | ${perRequest(us)} | ${((us / summary.totalUs) * 100).toFixed(1)}% |`),
      '',
      '| function (self time) | µs per request |',
      '|---|---:|',
      ...summary.functions.slice(0, 20).map(([name, us]) => `| ${name} | ${perRequest(us)} |`),
      '',
      ...(summary.inclusive.length > 0
        ? ['| under scripts matching (inclusive) | µs per request |', '|---|---:|', ...summary.inclusive.map(([part, us]) => `| ${part} | ${perRequest(us)} |`), '']
        : []),
    ];
    process.stdout.write(lines.join('\n'));
  } finally {
    await server.stop();
    await kafka.stop();
    await deleteBenchKeys(redis);
    redis.disconnect();
    rmSync(work, { recursive: true, force: true });
  }
}

function heapReport(profile: Parameters<typeof summariseHeap>[0], requests: number, title: string): string {
  const summary = summariseHeap(profile);
  const perRequest = (bytes: number) => (bytes / requests / 1024).toFixed(2);
  return [
    `# Heap allocation profile: ${title}`,
    '',
    `${perRequest(summary.totalBytes)} KB allocated per request (${requests} requests; sampled every 256 bytes, collected objects included).`,
    '',
    '| where | KB per request |',
    '|---|---:|',
    ...summary.categories.filter(([, bytes]) => bytes / requests >= 10).map(([name, bytes]) => `| ${name} | ${perRequest(bytes)} |`),
    '',
    '| function (allocating itself) | KB per request |',
    '|---|---:|',
    ...summary.functions.slice(0, 60).map(([name, bytes]) => `| ${name} | ${perRequest(bytes)} |`),
    '',
  ].join('\n');
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
