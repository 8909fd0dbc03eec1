// Two builds or settings of one server measured at the same time, each driven by half the
// connections: whatever the shared machine does during a round (another process, writeback, a
// frequency change) falls on both alike, and neither inherits a place in a sequence of cells.
// Used where a few percent must be told apart (the delivery log's cost, issue 23).
import { drive, warmUp } from './load';
import type { NodeBinary } from './node-binaries';
import { cpuMsPer1000Since, cpuTimeMs, startServer, type Server } from './processes';
import type { Scenario } from './scenarios';
import type { Target } from './targets';

/** One target's share of a round: req/s, CPU ms per 1000 requests, answers other than 2xx plus connection errors. */
export interface Side {
  rps: number;
  cpuMsPer1000: number;
  failures: number;
}

/** The first target's side, then the second's. */
export type SideBySideRound = [Side, Side];

export interface SideBySide {
  node: string;
  scenario: string;
  names: [string, string];
  connectionsEach: number;
  rounds: SideBySideRound[];
}

/**
 * `rounds` rounds of both targets at once. Each round starts both servers anew; every other
 * round starts the second target first, so neither side keeps an edge in start-up order.
 */
export async function sideBySide(
  node: NodeBinary,
  pair: [Target, Target],
  scenario: Scenario,
  options: { seconds: number; connections: number; rounds: number; warmUpRequests: number },
  nextFirstId: () => number,
): Promise<SideBySide> {
  const connectionsEach = Math.max(1, Math.floor((scenario.connections ?? options.connections) / 2));
  const rounds: SideBySideRound[] = [];
  for (let round = 1; round <= options.rounds; round++) {
    process.stderr.write(`bench: side by side · ${scenario.name} · ${node.label} · ${pair[0].name} | ${pair[1].name} · round ${round}/${options.rounds}\n`);
    const order: Array<0 | 1> = round % 2 === 1 ? [0, 1] : [1, 0];
    const servers: Server[] = [];
    try {
      for (const side of order) servers[side] = await startServer(node.path, pair[side].script, pair[side].env());
      const both = (seconds: number) => Promise.all(servers.map((server) => drive(server.port, scenario, seconds, connectionsEach, nextFirstId())));
      // Both at once, each until it has answered as many requests as a cell alone (bench/load.ts).
      await Promise.all(servers.map((server) => warmUp(server.port, scenario, connectionsEach, nextFirstId(), options.warmUpRequests)));
      const cpuBefore = servers.map((server) => cpuTimeMs(server.child.pid!));
      const loads = await both(options.seconds);
      const [a, b] = loads.map((load, side) => ({
        rps: load.rps,
        cpuMsPer1000: cpuMsPer1000Since(servers[side].child.pid!, cpuBefore[side], load.ok + load.non2xx),
        failures: load.non2xx + load.errors,
      }));
      rounds.push([a, b]);
    } finally {
      await Promise.all(servers.filter(Boolean).map((server) => server.stop()));
    }
  }
  return { node: node.label, scenario: scenario.name, names: [pair[0].name, pair[1].name], connectionsEach, rounds };
}

export function sideBySideTable(results: SideBySide[]): string {
  const lines = [
    '| scenario | node | first target | second target | conns each | round | req/s | CPU ms / 1000 req | non-2xx + errors |',
    '|---|---|---|---|---:|---:|---|---|---|',
  ];
  for (const result of results) {
    result.rounds.forEach(([a, b], i) =>
      lines.push(
        `| ${result.scenario} | ${result.node} | ${result.names[0]} | ${result.names[1]} | ${result.connectionsEach} | ${i + 1} | ` +
          `${a.rps} / ${b.rps} | ${a.cpuMsPer1000} / ${b.cpuMsPer1000} | ${a.failures} / ${b.failures} |`,
      ),
    );
  }
  return lines.join('\n');
}
