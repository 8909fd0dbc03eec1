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
