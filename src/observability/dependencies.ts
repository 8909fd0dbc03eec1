import { Gauge, type Registry } from 'prom-client';
import type { DependencyCheck } from '../lifecycle';

const CHECK_TIMEOUT_MS = 1000;

export interface DependencyReport {
  /** Each dependency: `up`, `down`, or a state short of up that needs an operator (`topic_missing`). */
  checks: Record<string, string>;
  /** Why one is down, and what else its check knows (the sink's topics). */
  details: Record<string, Record<string, unknown>>;
}

/** A check's failure that knows more than its message: its `detail` goes into /readyz's details. */
export class DependencyDown extends Error {
  constructor(
    message: string,
    readonly detail: Record<string, unknown>,
  ) {
    super(message);
  }
}

/**
 * Asks every dependency at once, each bounded by a second. A dependency that is down is the
 * same for every pod: it is reported (in /readyz's body and in metrics), never a reason for
 * this process to leave the load balancer.
 */
export async function checkDependencies(checks: DependencyCheck[]): Promise<DependencyReport> {
  const report: DependencyReport = { checks: {}, details: {} };
  await Promise.all(
    checks.map(async (check) => {
      const problem = await failure(check.ping);
      const extra = problem === undefined ? check.report?.() : undefined;
      report.checks[check.name] = problem !== undefined ? 'down' : (extra?.state ?? 'up');
      const detail = { ...(problem !== undefined ? { error: problem.message, ...problem.detail } : {}), ...extra?.detail };
      if (Object.keys(detail).length > 0) report.details[check.name] = detail;
    }),
  );
  return report;
}

/**
 * `igw_dependency_up{dependency}` (1 up, 0 down or short of up) and `igw_sink_topic{topic,state}`
 * (1 for each topic's current state; no series for a sink that checks no topics, so that the
 * alerting rules can name it whatever the sink), both refreshed at each scrape. The sink's
 * topics come in with the states a topic can be in (publish/sink.ts's TOPIC_STATES).
 */
export function registerDependencyMetrics(
  registry: Registry,
  checks: DependencyCheck[],
  topics: { states: readonly string[]; current(): Record<string, string> } = { states: [], current: () => ({}) },
): void {
  new Gauge({
    name: 'igw_dependency_up',
    help: 'Shared dependencies (redis, sink, triggers-file, s3): 1 when up, 0 when down or not usable (e.g. a missing topic)',
    labelNames: ['dependency'] as const,
    registers: [registry],
    async collect() {
      const { checks: states } = await checkDependencies(checks);
      this.reset();
      for (const [name, state] of Object.entries(states)) this.set({ dependency: name }, state === 'up' ? 1 : 0);
    },
  });
  new Gauge({
    name: 'igw_sink_topic',
    help: 'What the sink knows of each configured topic: 1 for its current state (present, missing, unauthorized, unknown)',
    labelNames: ['topic', 'state'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [topic, current] of Object.entries(topics.current())) {
        for (const state of topics.states) this.set({ topic, state }, state === current ? 1 : 0);
      }
    },
  });
}

/** undefined when the check resolves in time; its short reason (and what else it knows) otherwise. */
async function failure(ping: () => Promise<void>): Promise<{ message: string; detail?: Record<string, unknown> } | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
  });
  try {
    await Promise.race([ping(), timeout]);
    return undefined;
  } catch (error) {
    if (error instanceof DependencyDown) return { message: error.message, detail: error.detail };
    return { message: error instanceof Error ? error.message : 'down' };
  } finally {
    clearTimeout(timer);
  }
}
