// wrk as the load generator where a scenario's requests can be built in Lua: a C client on
// one thread takes far less of the two shared cores than autocannon, so the servers, not the
// load generator, are measured (the numbers were taken with wrk -t1).
import { execFile, execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LoadResult } from './load';

/**
 * A request wrk can build: in the body and header values, `{n}` is a counter unique in the run
 * and `{k}` the even number at or below it (two requests in a row share it).
 */
export interface WrkTemplate {
  method: 'POST';
  path: string;
  headers: Record<string, string>;
  body: string;
}

export function wrkAvailable(): boolean {
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' });
    return true;
  } catch (error) {
    // wrk --version exits 1 after printing its version
    return (error as { status?: number }).status === 1;
  }
}

const lua = (s: string) => JSON.stringify(s); // a JSON string literal is a valid Lua string literal for ASCII

/** `a{n}b` into the Lua expression "a" .. n .. "b" (and `{k}` into k). */
function luaTemplate(text: string): string {
  return text
    .split(/(\{[nk]\})/)
    .filter((part) => part !== '')
    .map((part) => (part === '{n}' ? 'n' : part === '{k}' ? 'k' : lua(part)))
    .join(' .. ');
}

function script(template: WrkTemplate): string {
  const headers = Object.entries(template.headers)
    .map(([name, value]) => `  h[${lua(name)}] = ${luaTemplate(value)}`)
    .join('\n');
  return `
local n = 0
function init(args) n = tonumber(args[1]) end
function request()
  n = n + 1
  local k = n - n % 2
  local h = {}
${headers}
  return wrk.format(${lua(template.method)}, ${lua(template.path)}, h, ${luaTemplate(template.body)})
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('{"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"status":%d,"errors":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), e.status,
    e.connect + e.read + e.write + e.timeout))
end
`;
}

/** One wrk run: `connections` keep-alive connections on one thread for `seconds`. */
export function driveWrk(port: number, template: WrkTemplate, seconds: number, connections: number, firstId: number): Promise<LoadResult> {
  const file = join(tmpdir(), `igw-bench-${process.pid}-${firstId}.lua`);
  writeFileSync(file, script(template));
  const args = ['-t1', `-c${connections}`, `-d${seconds}s`, '--timeout', '10s', '-s', file, `http://127.0.0.1:${port}`, '--', String(firstId)];
  return new Promise((resolve, reject) => {
    execFile('wrk', args, { maxBuffer: 1 << 20 }, (error, stdout) => {
      rmSync(file, { force: true }); // read once wrk starts; one is written per run
      if (error) return reject(new Error(`wrk failed: ${error.message}\n${stdout}`));
      const line = stdout.split('\n').find((l) => l.startsWith('{"requests"'));
      if (!line) return reject(new Error(`wrk printed no summary:\n${stdout}`));
      const r = JSON.parse(line) as { requests: number; duration_us: number; p50_us: number; p99_us: number; status: number; errors: number };
      resolve({
        rps: Math.round(r.requests / (r.duration_us / 1e6)),
        p50: Math.round(r.p50_us / 100) / 10,
        p99: Math.round(r.p99_us / 100) / 10,
        ok: r.requests - r.status,
        non2xx: r.status,
        errors: r.errors,
      });
    });
  });
}
