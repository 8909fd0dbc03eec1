import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The repository root: the nearest folder above this file with a package.json (also from a compiled copy). */
function repositoryRoot(from: string): string {
  let dir = from;
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

const MAIN = join(repositoryRoot(__dirname), 'dist', 'main.js');

export interface RunningGateway {
  child: ChildProcess;
  /** The public listener: ingress routes and /healthz. */
  url: string;
  port: number;
  /** The admin listener: /admin, /metrics, /readyz. */
  adminUrl: string;
  adminPort: number;
  /** Every stdout and stderr line so far. */
  output(): string;
  /** Resolves once the output contains `text` (logs are written asynchronously). */
  waitForOutput(text: string, timeoutMs?: number): Promise<void>;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface GatewayProcessOptions {
  /** Node options before dist/main.js (e.g. `--expose-gc`, `--require <preload>`). */
  nodeArgs?: string[];
  /** Open an IPC channel to the child (child.send / 'message'). */
  ipc?: boolean;
}

/** Starts the built gateway (dist/main.js) as a child process on a free port. */
// KEY_FETCH is off unless the test sets it: no test's request may reach a provider's real key server.
export async function startGateway(env: Record<string, string>, timeoutMs = 30_000, options: GatewayProcessOptions = {}): Promise<RunningGateway> {
  if (!existsSync(MAIN)) throw new Error('dist/main.js is missing: run `npm run build` (npm test does it first)');
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), MAIN], {
    env: { PATH: process.env.PATH ?? '', PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', KEY_FETCH: 'off', ...env },
    stdio: options.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  // 'close', not 'exit': by then everything the gateway wrote has been read into `output`.
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  activeChildren.add(child);
  exited.then(() => activeChildren.delete(child));

  const [port, adminPort] = await new Promise<[number, number]>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start within ${timeoutMs} ms:\n${output}`)), timeoutMs);
    const poll = setInterval(() => {
      const match = output.match(/"port":(\d+),"adminPort":(\d+)[^\n]*"msg":"listening"/);
      if (match) {
        clearInterval(poll);
        clearTimeout(timer);
        resolve([Number(match[1]), Number(match[2])]);
      }
    }, 20);
    exited.then((code) => {
      clearInterval(poll);
      clearTimeout(timer);
      reject(new Error(`gateway exited with ${code} before listening:\n${output}`));
    });
  });
  return {
    child,
    port,
    url: `http://127.0.0.1:${port}`,
    adminPort,
    adminUrl: `http://127.0.0.1:${adminPort}`,
    output: () => output,
    waitForOutput: async (text, waitMs = 15_000) => {
      const until = performance.now() + waitMs;
      while (!output.includes(text)) {
        if (performance.now() > until) throw new Error(`output did not contain ${text} within ${waitMs} ms:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    exited,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Runs the gateway expecting it to exit (e.g. on bad config); returns code and output. */
export function runGatewayToExit(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [MAIN], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, output })));
}

const activeChildren = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of activeChildren) child.kill('SIGKILL');
});
