// The goals, read off the rows of one run: each on its own line, met or not.
import { availableParallelism } from 'node:os';
import type { Row } from './run';
import type { Scenario } from './scenarios';
import type { SideBySide } from './side-by-side';

export const HEADLINE = 'small JSON + bearer';
/** A second Redis + Kafka gateway in the headline scenario lingers this long (the default is 0). */
export const LINGER_TRADE_OFF_MS = 5;

const GOALS = {
  /** Redis + Kafka gateway over the naive receiver, by Node major. */
  overNaive: { '20': 1.1, '24': 1.5 } as Record<string, number>,
  /** p99 no worse than the naive receiver's, where asked (issue 24: Node 20). */
  p99NoWorse: { '20': true } as Record<string, boolean>,
  embeddedOverFloor: 0.7,
  /** The delivery log's cost against the same target with DELIVERY_LOG_MAX=0, side by side (issue 23): see deliveryLogCostLine. */
  deliveryLogCost: 0.05,
  producePer1000: 20,
  /** CPU per request of the server process over the reference's, median of the paired rounds (issue 38). */
  embeddedCpuOverFloor: 1.8,
  productionCpuOverNaive: 0.7,
};

const major = (node: string) => node.replace(/^node /, '').split('.')[0];
const mark = (met: boolean) => (met ? 'met' : '**not met**');

export function goalLines(rows: Row[], sideBySide: SideBySide[] = []): string[] {
  const headline = rows.filter((row) => row.scenario === HEADLINE);
  const lines: string[] = [];
  for (const node of [...new Set(headline.map((row) => row.node))]) {
    const find = (prefix: string) => headline.find((row) => row.node === node && row.target.startsWith(prefix));
    const floor = find('floor');
    const naive = find('naive');
    const embedded = headline.find((row) => row.node === node && row.target === 'gateway, embedded');
    const production = headline.find((row) => row.node === node && row.target === 'gateway, Redis + Kafka');
    const want = GOALS.overNaive[major(node)];
    if (production && naive && naive.rps > 0) {
      const ratio = production.rps / naive.rps;
      if (want !== undefined) lines.push(`- ${node}: Redis + Kafka ${ratio.toFixed(2)}× the naive receiver (goal ≥ ${want}×): ${mark(ratio >= want)}`);
      lines.push(`- ${node}: ${machineCeilingLine(production, naive)}`);
      const p99 = `- ${node}: Redis + Kafka p99 ${production.p99} ms, naive receiver ${naive.p99} ms`;
      lines.push(GOALS.p99NoWorse[major(node)] ? `${p99} (goal: no worse): ${mark(production.p99 <= naive.p99)}` : p99);
    }
    if (production && naive) lines.push(`- ${node}: ${cpuRatioLine('Redis + Kafka', production, 'the naive receiver', naive, GOALS.productionCpuOverNaive)}`);
    if (embedded && floor && floor.rps > 0) {
      const ratio = embedded.rps / floor.rps;
      lines.push(`- ${node}: embedded ${ratio.toFixed(2)}× the floor (goal ≥ ${GOALS.embeddedOverFloor}×): ${mark(ratio >= GOALS.embeddedOverFloor)}; p99 ${embedded.p99} ms, floor ${floor.p99} ms`);
    }
    if (embedded && floor) lines.push(`- ${node}: ${cpuRatioLine('embedded', embedded, 'the floor', floor, GOALS.embeddedCpuOverFloor)}`);
    if (production?.producePer1000 !== undefined) {
      lines.push(
        `- ${node}: ${production.producePer1000} Produce requests per 1000 records (goal ≤ ${GOALS.producePer1000}; naive receiver ${naive?.producePer1000 ?? '?'}): ${mark(production.producePer1000 <= GOALS.producePer1000)}`,
      );
    }
    for (const [mode, withLog] of [['embedded', embedded], ['Redis + Kafka', production]] as const) {
      const beside = (second: string) => sideBySide.find((result) => result.node === node && result.names[0] === `gateway, ${mode}` && result.names[1].startsWith(second));
      const logCost = beside(`gateway, ${mode}, DELIVERY_LOG_MAX=0`) ?? beside(`gateway, ${mode} (A/A copy)`);
      if (logCost) lines.push(`- ${node}: ${deliveryLogCostLine(mode, logCost)}`);
      const baselineBeside = beside(`baseline build, ${mode}`);
      if (baselineBeside) lines.push(`- ${node}: ${baselineSideLine(mode, baselineBeside)}`);
      const baseline = find(`baseline build, ${mode}`);
      if (withLog && baseline) lines.push(`- ${node}: ${baselineLine(mode, withLog, baseline)}`);
    }
    const lingering = find(`gateway, Redis + Kafka, BATCH_LINGER_MS=`);
    if (lingering?.producePer1000 !== undefined && naive && naive.rps > 0) {
      lines.push(
        `- ${node}: with BATCH_LINGER_MS=${LINGER_TRADE_OFF_MS}: ${lingering.producePer1000} Produce requests per 1000 records at ${(lingering.rps / naive.rps).toFixed(2)}× the naive receiver, p99 ${lingering.p99} ms`,
      );
    }
  }
  return lines.length > 0 ? [`## Goals (scenario "${HEADLINE}")`, '', ...lines, ''] : [];
}

/**
 * CPU per request of the server process against a reference's (issue 38): round i of each ran
 * next to the other, so each pair shares the machine's load of that moment; the median of the
 * pairs' ratios is judged. The thread groups' ratios (main thread, V8's workers) are shown beside
 * it, and the target's own ms per 1000 requests by group, median round.
 */
export function cpuRatioLine(mode: string, row: Row, referenceName: string, reference: Row, goal: number): string {
  const pairs = pairedRounds(row, reference);
  const ratioOf = (pick: (round: Round) => number) => pairs.map(([x, y]) => (pick(y) > 0 ? pick(x) / pick(y) : Infinity));
  const total = ratioOf((round) => round.cpuMsPer1000);
  const mainThread = ratioOf((round) => round.threads?.main ?? 0);
  const ratio = median(total);
  const fixed = (values: number[]) => values.map((value) => value.toFixed(2)).join(', ');
  const t = row.threads;
  const r = reference.threads;
  return (
    `${mode}: CPU per request ${ratio.toFixed(2)}× ${referenceName}'s (median of ${total.length} paired rounds: ${fixed(total)}; goal ≤ ${goal}×): ${mark(ratio <= goal)}; ` +
    `main thread alone ${median(mainThread).toFixed(2)}× (${fixed(mainThread)}); ` +
    `ms per 1000 requests ${row.cpuMsPer1000} (main ${t.main}, V8 workers ${t.v8}, libuv pool ${t.pool}, other ${t.other}) against ${reference.cpuMsPer1000} ` +
    `(main ${r.main}, V8 workers ${r.v8}, libuv pool ${r.pool}, other ${r.other})`
  );
}

/**
 * How far the machine itself lets the gateway go: the CPU the whole machine spent per request of
 * its cell (gateway, load generator, Redis, broker, kernel), and the rate at which that cost
 * would fill every core. A ratio over the naive receiver that needs more than that ceiling is
 * out of reach at this cost per request, however the gateway waits.
 */
export function machineCeilingLine(production: Row, naive: Row): string {
  const cores = availableParallelism();
  const ceiling = Math.round((cores * 1000 * 1000) / Math.max(1, production.machine.msPer1000));
  return (
    `the whole machine spent ${production.machine.msPer1000} ms of CPU per 1000 requests of the gateway, Redis + Kafka ` +
    `(its own process ${production.cpuMsPer1000}) at ${production.machine.busyPercent}% busy, against ${naive.machine.msPer1000} ` +
    `(${naive.cpuMsPer1000}) at ${naive.machine.busyPercent}% for the naive receiver; at that cost all ${cores} cores would serve at most ` +
    `${ceiling} req/s, ${(ceiling / naive.rps).toFixed(2)}× the naive receiver`
  );
}

/** Largest difference between a target's rounds, as a share of its best round's req/s: the run's own noise. */
function roundSpread(row: Row): number {
  const rps = row.rounds?.map((round) => round.rps) ?? [];
  return rps.length > 1 ? (Math.max(...rps) - Math.min(...rps)) / Math.max(...rps) : 0;
}

const percent = (share: number) => `${(share * 100).toFixed(1)}%`;

/**
 * The delivery log's cost: the gateway and its DELIVERY_LOG_MAX=0 twin driven at the same time
 * (bench/side-by-side.ts), so each round's pair shares the machine's load of that moment and
 * neither inherits a place in a sequence of cells. The median of the rounds is judged (one
 * disturbed round does not decide it) on throughput, as issue 23 asks, and only when every
 * request of every round was answered 2xx. CPU per request is shown beside it: where a pod is
 * bound by CPU, it is the share of its capacity the log takes.
 */
export function deliveryLogCostLine(mode: string, result: SideBySide): string {
  const { rps, cpu } = relativeChanges(result.rounds);
  // A side answering errors fast is no measure of its cost.
  const failures = result.rounds.reduce((sum, [a, b]) => sum + a.failures + b.failures, 0);
  const rpsCosts = rps.map((change) => -change);
  const rpsCost = median(rpsCosts);
  const met = failures === 0 && rpsCost <= GOALS.deliveryLogCost;
  return (
    `delivery log cost, ${mode}, ${result.names[1]} beside it: ${percent(rpsCost)} of req/s (median of ${rps.length} side-by-side rounds: ${rpsCosts.map(percent).join(', ')}), ` +
    `${failures} non-2xx or errors (goal ≤ ${percent(GOALS.deliveryLogCost)} of throughput, every request answered 2xx): ${mark(met)}; ` +
    `CPU per request ${signed(median(cpu))} (${cpu.map(signed).join(', ')})`
  );
}

/**
 * This build against another one (--baseline), round by round like the log's cost: the median
 * of the paired rounds' req/s and CPU per request. No loss: req/s not lower and CPU per request
 * not higher than the rounds' own spread allows.
 */
export function baselineLine(mode: string, current: Row, baseline: Row): string {
  const { cpu, rps, noise } = pairedChanges(current, baseline);
  const rpsChange = median(rps);
  const cpuChange = median(cpu);
  const met = rpsChange >= -noise && cpuChange <= noise;
  return (
    `${mode} against the baseline build: ${signed(rpsChange)} req/s (median of ${rps.length} paired rounds: ${rps.map(signed).join(', ')}), ` +
    `${signed(cpuChange)} CPU per request (${cpu.map(signed).join(', ')}; a target's rounds differ by up to ${percent(noise)}) ` +
    `(goal: no throughput loss beyond the rounds' spread): ${mark(met)}`
  );
}

/** This build against the baseline build, both driven at the same time (--baseline-side): the medians of the rounds' changes. */
export function baselineSideLine(mode: string, result: SideBySide): string {
  const { rps, cpu } = relativeChanges(result.rounds);
  return (
    `${mode} against the baseline build, side by side: ${signed(median(rps))} req/s (median of ${rps.length} rounds: ${rps.map(signed).join(', ')}), ` +
    `${signed(median(cpu))} CPU per request (${cpu.map(signed).join(', ')})`
  );
}

/** Each paired round's change of `a` against `b`, and the larger of their rounds' spreads. */
function pairedChanges(a: Row, b: Row): { rps: number[]; cpu: number[]; noise: number } {
  return { ...relativeChanges(pairedRounds(a, b)), noise: Math.max(roundSpread(a), roundSpread(b)) };
}

/** Each pair's change of its first round against its second (x ÷ y − 1), in req/s and in CPU per request. */
function relativeChanges(pairs: Array<[Round, Round]>): { rps: number[]; cpu: number[] } {
  return {
    rps: pairs.map(([x, y]) => (y.rps > 0 ? x.rps / y.rps - 1 : -Infinity)),
    cpu: pairs.map(([x, y]) => (y.cpuMsPer1000 > 0 ? x.cpuMsPer1000 / y.cpuMsPer1000 - 1 : Infinity)),
  };
}

const signed = (share: number) => `${share >= 0 ? '+' : ''}${percent(share)}`;

type Round = { rps: number; cpuMsPer1000: number; threads?: { main: number } };

/** Round i of one target beside round i of the other (a single round: the rows themselves). */
function pairedRounds(a: Row, b: Row): Array<[Round, Round]> {
  if (!a.rounds || !b.rounds || a.rounds.length !== b.rounds.length || a.rounds.length === 0) return [[a, b]];
  return a.rounds.map((round, i) => [round, b.rounds![i]]);
}

function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** MB/s and CPU ms per MB of the JSON body-size scenarios. */
export function bodySizeLines(rows: Row[], scenarios: Scenario[]): string[] {
  const sized = scenarios.filter((s) => /^JSON \d/.test(s.name));
  const lines: string[] = [];
  for (const scenario of sized) {
    const bytes = Buffer.byteLength(scenario.request(0).body);
    for (const row of rows.filter((r) => r.scenario === scenario.name)) {
      const mbPerSecond = (row.rps * bytes) / 1e6;
      const cpuMsPerMB = (row.cpuMsPer1000 / 1000) * (1e6 / bytes);
      lines.push(`| ${scenario.name} | ${row.node} | ${row.target} | ${bytes} | ${row.rps} | ${mbPerSecond.toFixed(1)} | ${cpuMsPerMB.toFixed(1)} | ${row.rssMiB} |`);
    }
  }
  if (lines.length === 0) return [];
  return ['## Body size', '', '| scenario | node | target | body bytes | req/s | MB/s | CPU ms / MB | peak RSS MiB |', '|---|---|---|---:|---:|---:|---:|---:|', ...lines, ''];
}
