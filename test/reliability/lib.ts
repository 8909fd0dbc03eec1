/**
 * Shared pieces of the reliability suite: an HTTP client that never throws (every outcome is
 * a value with its latency), a raw-socket client for requests no HTTP client would send, RSS
 * sampling, /metrics reading, and the per-scenario report.
 *
 * Every request goes to 127.0.0.1 only, and every loop in the suite is bounded by a count and
 * a duration.
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { connect } from 'node:net';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Rate limits high enough that no scenario is ever limited (429 is not what is tested). */
export const UNLIMITED = { RATE_LIMIT_DEFAULT: '1000000/60', RATE_LIMIT_WORKSPACE: '1000000/60' };

export interface Sent {
  /** HTTP status, or undefined when no answer came (connection error or client timeout). */
  status?: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** From just before the request was written until its answer's end (or the error). */
  ms: number;
  /** performance.now() when the request was started / settled. */
  startedAt: number;
  endedAt: number;
  /** ECONNREFUSED, ECONNRESET, client-timeout, ... */
  error?: string;
}

export interface SendOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** The client gives up after this long (the outcome is then `client-timeout`). */
  timeoutMs?: number;
  agent?: Agent;
}

/** One HTTP request to `base` + `path`; resolves with the outcome, never rejects. */
export function send(base: string, path: string, options: SendOptions = {}): Promise<Sent> {
  const url = new URL(path, base);
  if (url.hostname !== '127.0.0.1') throw new Error(`the suite only talks to 127.0.0.1, not ${url.hostname}`);
  const startedAt = performance.now();
  return new Promise<Sent>((resolve) => {
    let settled = false;
    const done = (outcome: Omit<Sent, 'ms' | 'startedAt' | 'endedAt'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const endedAt = performance.now();
      resolve({ ...outcome, ms: endedAt - startedAt, startedAt, endedAt });
    };
    const req = request(
      {
        host: '127.0.0.1',
        port: url.port,
        path: `${url.pathname}${url.search}`,
        method: options.method ?? 'POST',
        headers: options.headers,
        agent: options.agent ?? false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => done({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', (error: NodeJS.ErrnoException) => done({ headers: {}, body: '', error: error.code ?? error.message }));
      },
    );
    const timer = setTimeout(() => {
      done({ headers: {}, body: '', error: 'client-timeout' });
      req.destroy();
    }, options.timeoutMs ?? 10_000);
    req.on('error', (error: NodeJS.ErrnoException) => done({ headers: {}, body: '', error: error.code ?? error.message }));
    req.end(options.body);
  });
}

export function header(sent: Sent, name: string): string | undefined {
  const value = sent.headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

export const is2xx = (sent: Sent) => sent.status !== undefined && sent.status >= 200 && sent.status < 300;

export interface RawOutcome {
  /** Status from the first answer's status line; undefined when the server closed without one. */
  status?: number;
  /** The server closed the connection (after or without an answer). */
  closed: boolean;
  /** Nothing happened within the client's bound; the client closed the socket. */
  timedOut: boolean;
  error?: string;
  ms: number;
}

/**
 * Writes raw bytes (a list of chunks, each optionally after a pause) on a fresh TCP connection
 * and resolves with the status of the server's first answer as soon as its header block is in
 * (the client then closes the connection), or with `closed` when the server closes without
 * one, or `timedOut` after `timeoutMs`.
 */
export function rawExchange(port: number, chunks: Array<Buffer | string | { pauseMs: number }>, timeoutMs = 5000): Promise<RawOutcome> {
  const started = performance.now();
  return new Promise<RawOutcome>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    let settled = false;
    let stopWriting = false;
    const statusOf = () => {
      const match = /^HTTP\/1\.[01] (\d{3})/.exec(received);
      return match ? Number(match[1]) : undefined;
    };
    const finish = (extra: Partial<RawOutcome>) => {
      if (settled) return;
      settled = true;
      stopWriting = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ status: statusOf(), closed: false, timedOut: false, ms: performance.now() - started, ...extra });
    };
    const timer = setTimeout(() => finish({ timedOut: true }), timeoutMs);
    socket.setNoDelay(true);
    socket.on('data', (data: Buffer) => {
      if (received.length < 4096) received += data.toString('latin1');
      // The status and headers are all the suite looks at: done once they are in.
      if (statusOf() !== undefined && received.includes('\r\n\r\n')) finish({});
    });
    socket.on('end', () => finish({ closed: true }));
    socket.on('close', () => finish({ closed: true }));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      // A reset after the answer arrived (the server cut a body it did not want) still counts as answered.
      finish({ closed: true, error: error.code ?? error.message });
    });
    socket.on('connect', async () => {
      for (const chunk of chunks) {
        if (stopWriting || socket.destroyed) return;
        if (typeof chunk === 'object' && !Buffer.isBuffer(chunk)) {
          await sleep(chunk.pauseMs);
          continue;
        }
        const flushed = socket.write(chunk);
        if (!flushed) await new Promise<void>((resolve) => socket.once('drain', resolve).once('close', resolve));
      }
    });
  });
}

/** Reads a process's resident set size (MiB), or undefined once it is gone. */
export function rssMiB(pid: number): number | undefined {
  try {
    const match = readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/);
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Samples RSS every 50 ms; peak() is the highest seen so far. */
export function sampleRss(pid: number): { peak(): number; stop(): number } {
  let peak = rssMiB(pid) ?? 0;
  const timer = setInterval(() => (peak = Math.max(peak, rssMiB(pid) ?? 0)), 50);
  return {
    peak: () => peak,
    stop() {
      clearInterval(timer);
      peak = Math.max(peak, rssMiB(pid) ?? 0);
      return peak;
    },
  };
}

/** The sum of one Prometheus counter's samples whose labels include every pair of `labels`. */
export async function metric(base: string, name: string, labels: Record<string, string> = {}): Promise<number> {
  const sent = await send(base, '/metrics', { method: 'GET', timeoutMs: 5000 });
  if (sent.status !== 200) throw new Error(`/metrics answered ${sent.status ?? sent.error}`);
  let total = 0;
  for (const line of sent.body.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

/** Polls `probe` every `everyMs` until it holds; false after `timeoutMs`. */
export async function until(probe: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 50): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await probe()) return true;
    if (Date.now() > deadline) return false;
    await sleep(everyMs);
  }
}

/**
 * Until /readyz is 200 and reports every dependency up (Redis and the sink connected, the
 * triggers file applied). Readiness itself does not wait for them: they are reported in its body.
 */
export async function waitReady(base: string, timeoutMs = 20_000): Promise<boolean> {
  return until(
    async () => {
      const res = await send(base, '/readyz', { method: 'GET', timeoutMs: 2000 });
      if (res.status !== 200) return false;
      const checks = (JSON.parse(res.body) as { checks?: Record<string, string> }).checks ?? {};
      return Object.values(checks).every((state) => state === 'up');
    },
    timeoutMs,
    100,
  );
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = values.slice().sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export function countBy<T>(items: T[], key: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return counts;
}

export const statusOf = (sent: Sent) => (sent.status !== undefined ? String(sent.status) : (sent.error ?? 'none'));

export function formatCounts(counts: Record<string, number>): string {
  return Object.entries(counts)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}×${v}`)
    .join(' ');
}

/** One pass/fail check with the numbers it was decided on. */
export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

/** What a scenario reports: its checks and the row of the summary table. */
export class Report {
  readonly checks: Check[] = [];
  readonly notes: string[] = [];
  row = { sent: '-', acknowledged: '-', found: '-', duplicated: '-', other: '' };

  constructor(readonly scenario: string) {}

  check(name: string, ok: boolean, detail: string): boolean {
    this.checks.push({ name, ok, detail });
    log(`  ${ok ? 'ok  ' : 'FAIL'} ${name}: ${detail}`);
    return ok;
  }

  note(text: string): void {
    this.notes.push(text);
    log(`  note: ${text}`);
  }

  /** A scenario that threw before finishing fails with the error as its last check. */
  crashed(error: unknown): void {
    const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
    this.check('scenario ran to the end', false, message.split('\n').slice(0, 6).join(' | '));
  }

  get passed(): boolean {
    return this.checks.length > 0 && this.checks.every((c) => c.ok);
  }
}

const suiteStarted = performance.now();

export function log(line: string): void {
  const seconds = ((performance.now() - suiteStarted) / 1000).toFixed(1).padStart(6);
  process.stdout.write(`[${seconds}s] ${line}\n`);
}

/** Collects clean-up steps; run() runs them in reverse order and never throws. */
export class Cleanup {
  private readonly steps: Array<{ what: string; run: () => unknown }> = [];

  add(what: string, run: () => unknown): void {
    this.steps.push({ what, run });
  }

  async run(): Promise<void> {
    while (this.steps.length > 0) {
      const step = this.steps.pop()!;
      try {
        await step.run();
      } catch (error) {
        log(`  cleanup "${step.what}" failed: ${(error as Error).message}`);
      }
    }
  }
}
