/**
 * npm run test:reliability — the gateway's promise under failure, checked by numbers:
 *
 *   1. broker stall + death   every 2xx is in the topic; outage requests get a timely 503;
 *                             retries after recovery are accepted once
 *   2. gateway SIGKILL        a retrying client loses nothing; duplicates carry their key
 *   3. Redis down             answers stay fast, store errors are counted, dedupe comes back
 *   4. bad input              thousands of hostile requests: 4xx, zero 5xx, memory back down
 *
 * Needs the build (dist/main.js), Redis on 127.0.0.1:6379 (keys under a unique prefix,
 * deleted after), `redis-server` and `kcat` on PATH. Prints a table and the line
 * `reliability: N passed, M failed`; exits 1 when M > 0.
 *
 *   node dist-reliability/test/reliability/run.js [--only 1,3]
 */
import { badInputScenario } from './bad-input';
import { brokerScenario } from './broker';
import { gatewayKillScenario } from './gateway-kill';
import { log, Report } from './lib';
import { redisDownScenario } from './redis-down';

/** The whole suite gives up after this long (each scenario bounds itself well below it). */
const SUITE_TIMEOUT_MS = 8 * 60_000;

const SCENARIOS: Array<{ id: string; run: () => Promise<Report> }> = [
  { id: '1', run: brokerScenario },
  { id: '2', run: gatewayKillScenario },
  { id: '3', run: redisDownScenario },
  { id: '4', run: badInputScenario },
];

function table(reports: Report[]): string {
  const header = ['scenario', 'result', 'sent', 'acknowledged (2xx)', 'found in sink', 'duplicated', 'other'];
  const rows = reports.map((r) => [
    r.scenario,
    r.passed ? 'pass' : 'FAIL',
    r.row.sent,
    r.row.acknowledged,
    r.row.found,
    r.row.duplicated,
    r.row.other,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

async function main(): Promise<number> {
  const onlyIndex = process.argv.indexOf('--only');
  const only = onlyIndex >= 0 ? new Set(process.argv[onlyIndex + 1]?.split(',')) : undefined;
  const started = performance.now();
  const reports: Report[] = [];
  for (const scenario of SCENARIOS) {
    if (only && !only.has(scenario.id)) continue;
    const scenarioStarted = performance.now();
    log(`scenario ${scenario.id}`);
    const report = await scenario.run();
    log(`scenario ${scenario.id}: ${report.passed ? 'pass' : 'FAIL'} in ${((performance.now() - scenarioStarted) / 1000).toFixed(1)} s`);
    reports.push(report);
  }
  const failed = reports.filter((r) => !r.passed);
  process.stdout.write(`\n${table(reports)}\n\n`);
  for (const report of reports) {
    for (const check of report.checks.filter((c) => !c.ok)) process.stdout.write(`FAILED ${report.scenario}: ${check.name}: ${check.detail}\n`);
  }
  process.stdout.write(`took ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
  process.stdout.write(`reliability: ${reports.length - failed.length} passed, ${failed.length} failed\n`);
  return failed.length > 0 ? 1 : 0;
}

const watchdog = setTimeout(() => {
  process.stdout.write(`reliability: suite did not finish within ${SUITE_TIMEOUT_MS / 1000} s\n`);
  process.stdout.write('reliability: 0 passed, 1 failed\n');
  process.exit(1); // the helpers' exit hooks kill the gateways, brokers and redis-servers
}, SUITE_TIMEOUT_MS);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    process.stdout.write(`reliability: interrupted by ${signal}\n`);
    process.exit(130);
  });
}

main().then(
  (code) => {
    clearTimeout(watchdog);
    process.exitCode = code;
    // Anything still open (a keep-alive socket, a timer) must not hold the process.
    setTimeout(() => process.exit(code), 500).unref();
  },
  (error: unknown) => {
    process.stdout.write(`reliability: the suite itself failed: ${(error as Error).stack ?? String(error)}\n`);
    process.stdout.write('reliability: 0 passed, 1 failed\n');
    process.exit(1);
  },
);
