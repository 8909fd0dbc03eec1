// npm run bench:instructions -- --targets redis-kafka,redis-kafka-nolog: the instructions each
// target's server executes per request of the goals' scenario, counted by valgrind (callgrind,
// all threads), warm-up excluded. Unlike CPU time or req/s, the count hardly moves with the
// other processes on the shared cores, so a few percent between two targets is a real
// difference. It runs under valgrind (tens of times slower): a small fixed concurrency.
import { execFile, type spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startKafkaMock } from '../test/helpers/kafka-mock';
import { option } from './args';
import { HEADLINE } from './goals';
import { drive } from './load';
import { startServer } from './processes';
import { PROFILE_TARGETS } from './profile-targets';
import { BENCH_REGISTRY, SCENARIOS } from './scenarios';
import { deleteBenchKeys, requireRedis, targets } from './targets';

const argument = (name: string, fallback: string) => option(process.argv, name) ?? fallback;

/** Total instructions (Ir) of the dump (`callgrind_control -d`) callgrind wrote under `prefix`. */
function instructions(work: string, prefix: string): number {
  const dumps = readdirSync(work).filter((file) => file.startsWith(prefix));
  const totals = dumps.map((file) => Number(readFileSync(join(work, file), 'utf8').match(/^(?:totals|summary): (\d+)/m)?.[1] ?? 0));
  if (totals.length === 0) throw new Error(`callgrind wrote nothing under ${prefix}`);
  return Math.max(...totals);
}

/** callgrind_control finds the process by its user's name and $HOST (the server's HOST, startServer's 127.0.0.1). */
const CONTROL_ENV = { ...process.env, USER: process.env.USER ?? 'root', LOGNAME: process.env.LOGNAME ?? 'root', HOST: '127.0.0.1' };

/**
 * Sends callgrind a command while requests keep the server busy (valgrind takes a command only
 * while the process runs); resolves with how many of those requests were answered.
 */
async function control(port: number, pid: number, ...args: string[]): Promise<number> {
  const scenario = SCENARIOS.find((s) => s.name === HEADLINE)!;
  let done = false;
  const call = promisify(execFile)('callgrind_control', [...args, String(pid)], { env: CONTROL_ENV }).finally(() => (done = true));
  let answered = 0;
  for (let n = 0; !done; n++) {
    const { body, headers } = scenario.request(Date.now() * 1000 + n);
    await fetch(`http://127.0.0.1:${port}${scenario.path}`, { method: 'POST', headers: { ...scenario.headers, ...headers }, body });
    if (!done) answered++;
  }
  const { stdout, stderr } = await call;
  if (/error|failed/i.test(stdout + stderr)) throw new Error(`callgrind_control ${args.join(' ')}: ${stdout}${stderr}`);
  return answered;
}

async function kill(child: ReturnType<typeof spawn>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

async function main(): Promise<void> {
  const names = argument('targets', 'redis-kafka,redis-kafka-nolog').split(',');
  const warmup = Number(argument('warmup', '15'));
  const seconds = Number(argument('seconds', '20'));
  const connections = Number(argument('connections', '8'));
  const rounds = Number(argument('rounds', '1'));
  const scenario = SCENARIOS.find((s) => s.name === HEADLINE)!;
  const redis = await requireRedis();
  const kafka = await startKafkaMock({ topics: ['bench-instructions'], rttMs: 5 });
  const work = mkdtempSync(join(tmpdir(), 'igw-instructions-'));
  const registryFile = join(work, 'registry.json');
  writeFileSync(registryFile, JSON.stringify(BENCH_REGISTRY));
  const wrapper = join(work, 'valgrind-node.sh');
  writeFileSync(wrapper, `#!/bin/sh\nexec valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$CALLGRIND_OUT.%p" "${process.execPath}" "$@"\n`);
  chmodSync(wrapper, 0o755);
  const lines: string[] = [];
  try {
    const all = targets(work, registryFile, kafka, option(process.argv, 'baseline'));
    let firstId = Date.now();
    for (let round = 1; round <= rounds; round++) {
      for (const name of round % 2 === 1 ? names : [...names].reverse()) {
        const target = all.find((t) => t.name === PROFILE_TARGETS[name]);
        if (!target) throw new Error(`--targets: one of ${Object.keys(PROFILE_TARGETS).join(', ')} (baseline-*: give --baseline <dist dir>)`);
        const out = `${name}-${round}.callgrind`;
        process.stderr.write(`instructions: ${target.name} · round ${round}/${rounds}\n`);
        const server = await startServer(wrapper, target.script, { ...target.env(), USER: CONTROL_ENV.USER, LOGNAME: CONTROL_ENV.LOGNAME, CALLGRIND_OUT: join(work, out), SHUTDOWN_GRACE_MS: '200000', PUBLISH_TIMEOUT_MS: '60000', REDIS_TIMEOUT_MS: '10000' }, 300_000);
        const pid = server.child.pid!;
        try {
          await drive(server.port, scenario, warmup, connections, (firstId += 10_000_000));
          await control(server.port, pid, '-i', 'on');
          await control(server.port, pid, '-z');
          const load = await drive(server.port, scenario, seconds, connections, (firstId += 10_000_000));
          // The requests answered before the dump was taken are in it (±1 in flight).
          const beforeDump = await control(server.port, pid, '-d');
          await kill(server.child);
          const requests = load.ok + load.non2xx + beforeDump;
          const perRequest = instructions(work, out) / Math.max(1, requests);
          lines.push(`| ${target.name} | ${round} | ${requests} | ${load.non2xx + load.errors} | ${Math.round(perRequest / 1000)} |`);
        } finally {
          await kill(server.child);
        }
      }
    }
  } finally {
    await kafka.stop();
    await deleteBenchKeys(redis);
    redis.disconnect();
    rmSync(work, { recursive: true, force: true });
  }
  process.stdout.write(
    [
      `# Instructions per request: "${scenario.name}", ${connections} connections, ${seconds} s measured after ${warmup} s, node ${process.versions.node} under callgrind`,
      '',
      '| target | round | requests | non-2xx + errors | thousand instructions / request |',
      '|---|---:|---:|---:|---:|',
      ...lines,
      '',
    ].join('\n'),
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
