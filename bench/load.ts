import autocannon from 'autocannon';
import type { Scenario } from './scenarios';
import { driveWrk, wrkAvailable } from './wrk';

/** wrk where it is installed and the scenario has a template for it; autocannon otherwise. */
export const loadGenerator = (scenario: Scenario): 'wrk' | 'autocannon' => (scenario.wrk && hasWrk ? 'wrk' : 'autocannon');
const hasWrk = wrkAvailable();

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  ok: number;
  non2xx: number;
  errors: number;
}

/** Drives `connections` concurrent clients for `seconds`, each request built by the scenario. */
export async function drive(port: number, scenario: Scenario, seconds: number, connections: number, firstId: number): Promise<LoadResult> {
  if (scenario.wrk && hasWrk) {
    const { body, headers = {} } = scenario.wrk;
    return driveWrk(port, { method: 'POST', path: scenario.path, headers: { ...scenario.headers, ...headers }, body }, seconds, connections, firstId);
  }
  let n = firstId;
  const result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        path: scenario.path,
        setupRequest: (req: Record<string, any>) => {
          const { body, headers } = scenario.request(n++);
          return { ...req, body, headers: { ...scenario.headers, ...headers } };
        },
      },
    ],
  });
  return {
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

/** Requests answered before the goals' scenario is measured (bench/run.ts --warmup-requests). */
export const WARM_UP_REQUESTS = 50_000;

/**
 * Load in 1-second slices until `requests` have been answered (at most `maxSeconds`), the
 * requests' ids counted from `firstId`. V8
 * compiles a function to optimised code (Maglev, then TurboFan, on its background threads) once
 * it has run enough, so a warm-up counted in requests leaves every target equally tiered up
 * whatever its speed. After the 1-second warm-up used before, each 6-second window still held
 * V8's compiler at work (--trace-opt, Node 24): 0.8 s for the floor, 1.0 s for the embedded
 * gateway, 1.4 s for the Redis + Kafka gateway, 1.7 s for the naive receiver. That is start-up
 * cost, paid once per process, not per event.
 */
export async function warmUp(port: number, scenario: Scenario, connections: number, firstId: number, requests: number, maxSeconds = 30): Promise<void> {
  let answered = 0;
  for (let second = 0; answered < requests && second < maxSeconds; second++) {
    const load = await drive(port, scenario, 1, connections, firstId + second * IDS_PER_SLICE);
    answered += load.ok + load.non2xx;
  }
}

/** Ids a 1-second slice may use (far above any target's req/s): a warm-up spans at most 30 of these from its first id. */
const IDS_PER_SLICE = 200_000;
