// npm run bench: each scenario against the floor and the gateway (and, where Kafka and Redis
// are wanted, the naive receiver and the gateway in production mode), side by side in one run,
// on Node 20 and Node 24. Prints one markdown table and writes bench/results/latest.md.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startKafkaMock } from '../test/helpers/kafka-mock';
import { fileTargets, startFileStore } from './files';
import { drive, loadGenerator, warmUp, WARM_UP_REQUESTS, type LoadResult } from './load';
import { goalLines, bodySizeLines, HEADLINE, LINGER_TRADE_OFF_MS } from './goals';
import { idleConnectionRows, idleConnectionTable, type IdleRow } from './idle-connections';
import { measureMemory, memoryTable, type MemoryRow } from './memory';
import { nodeBinaries, type NodeBinary } from './node-binaries';
import { machineCpuMs, machineUseSince, sampleRss, startServer } from './processes';
import { cpuPer1000Since, readProcessCpu, type ThreadGroups } from './thread-cpu';
import { BENCH_REGISTRY, SCENARIOS, type Scenario } from './scenarios';
import { sideBySide, sideBySideTable, type SideBySide } from './side-by-side';
import { deleteBenchKeys, requireRedis, targets, type Target } from './targets';
import { option } from './args';

const ROOT = join(__dirname, '..', '..');

interface Options {
  seconds: number;
  connections: number;
  nodes: string[];
  only?: string;
  memory: boolean;
  /** Rounds of the goals' scenario, targets alternating (every other round in reverse order); the goals pair round i of one target with round i of another. */
  rounds: number;
  /** Another build's dist/ folder: its gateway runs beside this one (before/after in one run). */
  baseline?: string;
  /** Rounds of each target measured side by side with its twin (the delivery log's cost). */
  sideRounds: number;
  /** Requests answered before each cell of the goals' scenario is measured (bench/load.ts warmUp); the other scenarios warm up for 1 s. */
  warmUpRequests: number;
  /** A/A check: each twin replaced by a copy of its partner, so the side-by-side lines show the method's own noise. */
  aa: boolean;
  /** With --baseline: this build and the baseline build also measured at the same time, side by side, in `sideRounds` rounds (few percent told apart on a loaded machine). */
  baselineSide: boolean;
  /** Only the targets whose name contains one of these (comma-separated, or |-separated where a name holds a comma; `=name` for that name exactly), to keep runs short while iterating. */
  targets?: string[];
}

export interface Row extends LoadResult {
  scenario: string;
  node: string;
  target: string;
  rssMiB: number;
  connections: number;
  /** CPU time the server process used per request: robust where load and server share two cores. Over rounds: the median. */
  cpuMsPer1000: number;
  /** The same by thread group (main thread, V8's platform workers, libuv's pool, the rest), from the round the total came from. */
  threads: ThreadGroups;
  /** Each round's req/s, p99 and CPU ms / 1000 requests (total and by thread group), in the order they ran. */
  rounds?: Round[];
  producePer1000?: number;
  /** The whole machine during the cell (bench/processes.ts machineUseSince), from the same round as req/s. */
  machine: { msPer1000: number; busyPercent: number };
}

export interface Round {
  rps: number;
  p99: number;
  cpuMsPer1000: number;
  threads: ThreadGroups;
}

function parseArgs(argv: string[]): Options {
  const get = (name: string) => option(argv, name);
  return {
    seconds: Number(get('seconds') ?? 8),
    connections: Number(get('connections') ?? 64),
    nodes: (get('nodes') ?? '20,24').split(','),
    only: get('only'),
    memory: !argv.includes('--no-memory'),
    rounds: Number(get('rounds') ?? 3),
    baseline: get('baseline'),
    sideRounds: Number(get('side-rounds') ?? 6),
    warmUpRequests: Number(get('warmup-requests') ?? WARM_UP_REQUESTS),
    aa: argv.includes('--aa'),
    baselineSide: argv.includes('--baseline-side'),
    targets: get('targets')?.split(get('targets')!.includes('|') ? '|' : ','),
  };
}

async function measure(node: NodeBinary, target: Target, scenario: Scenario, options: Options, firstId: number): Promise<Row> {
  const server = await startServer(node.path, target.script, target.env());
  const connections = scenario.connections ?? options.connections;
  try {
    if (scenario.name === HEADLINE) await warmUp(server.port, scenario, connections, firstId + 2_000_000, options.warmUpRequests);
    else await drive(server.port, scenario, 1, connections, firstId);
    const statsPort = server.adminPort ?? server.port;
    const before = await target.produceStats?.(statsPort);
    const rss = sampleRss(server.child.pid!);
    const cpuBefore = readProcessCpu(server.child.pid!);
    const machineBefore = machineCpuMs();
    const load = await drive(server.port, scenario, options.seconds, connections, firstId + 1_000_000);
    const machine = machineUseSince(machineBefore, load.ok + load.non2xx);
    const cpu = cpuPer1000Since(server.child.pid!, cpuBefore, load.ok + load.non2xx);
    const rssMiB = rss.stop();
    const after = await target.produceStats?.(statsPort);
    const records = after && before ? after.records - before.records : 0;
    const producePer1000 = after && before && records > 0 ? Math.round(((after.produceRequests - before.produceRequests) / records) * 1000) : undefined;
    return { scenario: scenario.name, node: node.label, target: target.name, rssMiB, connections, cpuMsPer1000: cpu.total, threads: cpu.groups, producePer1000, machine, ...load };
  } finally {
    await server.stop();
  }
}

/**
 * A target's rounds as one row: the round with the most req/s (its p99, RSS, machine share), with
 * the median round's CPU per request (total and by thread group), and every round kept for the
 * goals, which pair the targets' rounds.
 */
function bestOf(rounds: Row[]): Row {
  const best = rounds.reduce((kept, row) => (row.rps > kept.rps ? row : kept));
  const byCpu = [...rounds].sort((a, b) => a.cpuMsPer1000 - b.cpuMsPer1000);
  const middle = byCpu[Math.floor((byCpu.length - 1) / 2)];
  return {
    ...best,
    cpuMsPer1000: middle.cpuMsPer1000,
    threads: middle.threads,
    rounds: rounds.map(({ rps, p99, cpuMsPer1000, threads }) => ({ rps, p99, cpuMsPer1000, threads })),
  };
}

/** Every round of the goals' scenario: req/s, p99 and CPU per request by thread group. */
function roundsTable(rows: Row[]): string {
  const lines = [
    '| node | target | round | req/s | p99 ms | CPU ms / 1000 req | main thread | V8 workers (GC) | libuv pool | other threads |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const row of rows.filter((r) => r.scenario === HEADLINE)) {
    (row.rounds ?? []).forEach((round, i) =>
      lines.push(
        `| ${row.node} | ${row.target} | ${i + 1} | ${round.rps} | ${round.p99} | ${round.cpuMsPer1000} | ${round.threads.main} | ${round.threads.v8} | ${round.threads.pool} | ${round.threads.other} |`,
      ),
    );
  }
  return lines.join('\n');
}

function table(rows: Row[]): string {
  const header =
    '| scenario | node | target | conns | req/s | req/s of each round | p50 ms | p99 ms | × floor | × naive | CPU ms / 1000 req | main / V8 workers / libuv pool / other | machine CPU ms / 1000 req | machine busy | peak RSS MiB | Produce / 1000 records | 2xx | non-2xx | errors |';
  const lines = [header, '|---|---|---|---:|---:|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|'];
  const ratio = (row: Row, prefix: string) => {
    const base = rows.find((r) => r.scenario === row.scenario && r.node === row.node && r.target.startsWith(prefix));
    return base && base.rps > 0 ? (row.rps / base.rps).toFixed(2) : '';
  };
  for (const row of rows) {
    lines.push(
      `| ${row.scenario} | ${row.node} | ${row.target} | ${row.connections} | ${row.rps} | ${row.rounds?.map((round) => round.rps).join(', ') ?? ''} | ${row.p50} | ${row.p99} | ${ratio(row, 'floor')} | ${ratio(row, 'naive')} | ${row.cpuMsPer1000} | ${row.threads.main} / ${row.threads.v8} / ${row.threads.pool} / ${row.threads.other} | ${row.machine.msPer1000} | ${row.machine.busyPercent}% | ${row.rssMiB} | ${row.producePer1000 ?? ''} | ${row.ok} | ${row.non2xx} | ${row.errors} |`,
    );
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  const loadAtStart = loadavg();
  const work = mkdtempSync(join(tmpdir(), 'igw-bench-'));
  const rows: Row[] = [];
  const memoryRows: MemoryRow[] = [];
  const idleRows: IdleRow[] = [];
  const sideRows: SideBySide[] = [];
  const redis = await requireRedis();
  // rtt=5: a replicated acks=all broker answers in milliseconds; a mock answering at once
  // would hide the cost of one Produce per request. No topic is consumed: a consumer here
  // would take CPU from the measured processes.
  const kafka = await startKafkaMock({ topics: ['bench-idle'], rttMs: 5 });
  const registryFile = join(work, 'registry.json');
  writeFileSync(registryFile, JSON.stringify(BENCH_REGISTRY));
  let fileStore: Awaited<ReturnType<typeof startFileStore>> | undefined;
  try {
    const nodes = nodeBinaries(options.nodes);
    const scenarios = SCENARIOS.filter((s) => !options.only || s.name.includes(options.only));
    fileStore = scenarios.some((s) => s.files) ? await startFileStore() : undefined;
    let firstId = Date.now();
    for (const scenario of scenarios) {
      for (const node of nodes) {
        const unlimited = { TRIGGERS_FILE: registryFile, RATE_LIMIT_DEFAULT: '1000000/60', RATE_LIMIT_WORKSPACE: '1000000/60' };
        const candidates = scenario.files && fileStore ? fileTargets(work, unlimited, fileStore, ROOT) : targets(work, registryFile, kafka, options.baseline);
        const wanted = candidates
          .filter((t) => !t.headlineOnly || scenario.name === HEADLINE)
          .filter((t) => !options.targets || options.targets.some((part) => (part.startsWith('=') ? t.name === part.slice(1) : t.name.includes(part))));
        const chosen = wanted.filter((t) => !t.twinOf);
        const rounds = scenario.name === HEADLINE ? options.rounds : 1;
        const measured = new Map<string, Row[]>(chosen.map((target) => [target.name, []]));
        for (let round = 1; round <= rounds; round++) {
          // Reversed every other round, so a drift of the machine's load favours no target.
          for (const target of round % 2 === 1 ? chosen : [...chosen].reverse()) {
            process.stderr.write(`bench: ${scenario.name} · ${node.label} · ${target.name}${rounds > 1 ? ` · round ${round}/${rounds}` : ''}\n`);
            measured.get(target.name)!.push(await measure(node, target, scenario, options, (firstId += 10_000_000)));
          }
        }
        rows.push(...chosen.map((target) => bestOf(measured.get(target.name)!)));
        if (scenario.name !== HEADLINE) continue;
        for (const twin of wanted.filter((t) => t.twinOf)) {
          const partner = candidates.find((t) => t.name === twin.twinOf)!;
          const second = options.aa ? { ...partner, name: `${partner.name} (A/A copy)` } : twin;
          const sideOptions = { ...options, rounds: options.sideRounds };
          sideRows.push(await sideBySide(node, [partner, second], scenario, sideOptions, () => (firstId += 10_000_000)));
        }
        for (const mode of options.baselineSide ? ['embedded', 'Redis + Kafka'] : []) {
          const pair = [`gateway, ${mode}`, `baseline build, ${mode}`].map((name) => chosen.find((t) => t.name === name));
          if (!pair[0] || !pair[1]) continue;
          sideRows.push(await sideBySide(node, [pair[0], pair[1]], scenario, { ...options, rounds: options.sideRounds }, () => (firstId += 10_000_000)));
        }
      }
    }
    if (!options.only || 'idle connections'.includes(options.only)) {
      for (const node of nodes) {
        process.stderr.write(`bench: idle connections · ${node.label}\n`);
        idleRows.push(...(await idleConnectionRows(node, targets(work, registryFile, kafka, options.baseline).filter((t) => !t.produceStats))));
      }
    }
    if (options.memory) {
      for (const node of nodes) {
        process.stderr.write(`bench: memory · ${node.label}\n`);
        memoryRows.push(...(await measureMemory(node, work, { TRIGGERS_FILE: registryFile, RATE_LIMIT_WORKSPACE: '1000000/60' }, 4)));
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
    await fileStore?.stop();
    await kafka.stop();
    await deleteBenchKeys(redis);
    redis.disconnect();
  }
  const generators = [...new Set(SCENARIOS.filter((s) => rows.some((r) => r.scenario === s.name)).map((s) => `${s.name}: ${loadGenerator(s)}`))];
  const report = [
    `# Benchmark ${new Date().toISOString()}`,
    '',
    `${options.seconds} s per cell after a warm-up (the goals' scenario: ${options.warmUpRequests} requests answered, so V8 has compiled each target's hot code, bench/load.ts; the others: 1 s), on loopback; 2 cores shared by the load generator, the server, Redis and the Kafka mock (librdkafka via kcat, rtt 5 ms, acks=all). ` +
      `Load generator per scenario (wrk -t1 where the requests can be built in Lua, else autocannon): ${generators.join('; ')}. ` +
      `The goals' scenario runs ${options.rounds} rounds with the targets alternating (every other round in reverse order), and each of its rows is that target's best round (most req/s; CPU per request: the median of its rounds; every round's req/s beside it). ` +
      `CPU per request is the server process's utime + stime over the load's window (/proc/<pid>/stat) divided by the requests it answered, and by thread group from /proc/<pid>/task/*/stat (bench/thread-cpu.ts). ` +
      `The CPU goals pair round i of one target with round i of its reference (they ran next to each other) and judge the median of those ratios: one stall of the shared machine does not decide a goal.`,
    '',
    `The machine's load average (1, 5, 15 min) at the start: ${loadAtStart.map((x) => x.toFixed(2)).join(', ')}; at the end: ${loadavg().map((x) => x.toFixed(2)).join(', ')} (other processes on the shared cores move req/s; the CPU goals pair rounds run next to each other).`,
    '',
    ...goalLines(rows, sideRows),
    table(rows),
    '',
    ...(rows.some((row) => row.scenario === HEADLINE && (row.rounds?.length ?? 0) > 0)
      ? [`## CPU per request of each server process, round by round (scenario "${HEADLINE}"; ms per 1000 requests, by thread group)`, '', roundsTable(rows), '']
      : []),
    ...(sideRows.length > 0
      ? [
          `## Side by side (${options.sideRounds} rounds, both targets at once on half the connections each)`,
          '',
          sideBySideTable(sideRows),
          '',
        ]
      : []),
    ...bodySizeLines(rows, SCENARIOS),
    ...fileThroughput(rows),
    ...(idleRows.length > 0 ? ['## Idle keep-alive connections', '', idleConnectionTable(idleRows), ''] : []),
    ...(memoryRows.length > 0
      ? ['## Memory: uploads of a file at the size limit (512 KiB), embedded gateway, 4 s each', '', memoryTable(memoryRows), '']
      : []),
  ].join('\n');
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(join(ROOT, 'bench', 'results', 'latest.md'), report);
  process.stdout.write(report);
}

/** MB/s and peak RSS of the large-payload scenarios: payloads acknowledged per second × the payload's size. */
function fileThroughput(rows: Row[]): string[] {
  const lines: string[] = [];
  for (const scenario of SCENARIOS.filter((s) => s.payloadBytes !== undefined)) {
    const bytes = scenario.payloadBytes as number;
    const own = rows.filter((row) => row.scenario === scenario.name && !row.target.startsWith('floor'));
    if (own.length === 0) continue;
    lines.push(
      `${scenario.name} (${(bytes / 1_000_000).toFixed(1)} MB per request): ` +
        own.map((row) => `${row.target} on ${row.node}: ${((row.rps * bytes) / 1_000_000).toFixed(1)} MB/s, peak RSS ${row.rssMiB} MiB`).join('; '),
      '',
    );
  }
  return lines;
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
