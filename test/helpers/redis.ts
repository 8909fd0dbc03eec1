/**
 * Redis for tests. The shared server is the one at REDIS_TEST_URL (default 127.0.0.1:6379);
 * every test works under its own uniquePrefix() and deletes its keys after. Tests that need
 * to kill Redis start their own throw-away server with startRedisServer().
 *
 * A missing server or binary fails the test with a message that says how to get one: these
 * tests never skip silently.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { Writable } from 'node:stream';
import Redis from 'ioredis';
import pino, { type Logger } from 'pino';

export const REDIS_TEST_URL = process.env.REDIS_TEST_URL ?? 'redis://127.0.0.1:6379/0';

const HOW_TO_START =
  'start it with: redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no ' +
  '(install: apt-get install -y redis-server), or point REDIS_TEST_URL at another server';

/** A client on the shared test Redis; fails with how to start Redis when it is not there. */
export async function requireRedis(url = REDIS_TEST_URL): Promise<Redis> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 1000,
    commandTimeout: 2000,
    maxRetriesPerRequest: 1,
    retryStrategy: (times) => (times > 20 ? null : 100),
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    client.disconnect();
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`Redis is not reachable at ${url} (${reason}); ${HOW_TO_START}`);
  }
  return client;
}

/** A key prefix no other test uses, e.g. `igw-test:idem:3f9a1c2b7d4e:`. */
export function uniquePrefix(tag = 't'): string {
  return `igw-test:${tag}:${randomBytes(6).toString('hex')}:`;
}

/** Deletes every key under the prefix. */
export async function deleteKeys(client: Redis, prefix: string): Promise<number> {
  const pattern = `${prefix.replace(/[*?[\]\\]/g, (c) => `\\${c}`)}*`;
  let cursor = '0';
  let deleted = 0;
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
    cursor = next;
    if (keys.length > 0) deleted += await client.del(...keys);
  } while (cursor !== '0');
  return deleted;
}

/** A logger that writes nowhere. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}

/** A logger that keeps every line, parsed, for assertions. */
export function capturingLogger(level = 'debug'): { logger: Logger; lines: Array<Record<string, unknown>>; text: () => string } {
  const raw: string[] = [];
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (!line.trim()) continue;
        raw.push(line);
        lines.push(JSON.parse(line) as Record<string, unknown>);
      }
      callback();
    },
  });
  const logger = pino({ level, formatters: { level: (label) => ({ level: label }) } }, stream);
  return { logger, lines, text: () => raw.join('\n') };
}

/** A TCP port nothing listens on right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Fails with how to install Redis when the redis-server binary is missing. */
export function requireRedisServerBinary(): void {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new Error(
      `redis-server is not installed or not on PATH (${probe.error?.message ?? probe.stderr}); ` +
        'install it with: apt-get install -y redis-server',
    );
  }
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * A throw-away redis-server on its own port (no persistence), for tests that kill, freeze
 * and restart Redis without touching the shared one. Always call stop() in afterAll.
 */
export class RedisServerProcess {
  private child?: ChildProcess;

  private constructor(readonly port: number) {}

  static async start(port?: number): Promise<RedisServerProcess> {
    requireRedisServerBinary();
    const server = new RedisServerProcess(port ?? (await freePort()));
    await server.start();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}/0`;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Starts (or starts again, on the same port) and resolves once it answers PING. */
  async start(): Promise<void> {
    if (this.child) throw new Error('redis-server already running');
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    running.add(child);
    child.once('exit', () => running.delete(child));
    this.child = child;
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) break;
      if (await answersPing(this.url)) return;
      await sleep(50);
    }
    await this.stop();
    throw new Error(`redis-server on port ${this.port} did not start: ${output.trim()}`);
  }

  /** Kills the server at once (a crash: no shutdown, connections cut) and waits for it to exit. */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await exited;
  }

  /** Freezes the server: connections stay open but nothing answers (a black-holed Redis). */
  freeze(): void {
    this.child?.kill('SIGSTOP');
  }

  thaw(): void {
    this.child?.kill('SIGCONT');
  }
}

async function answersPing(url: string): Promise<boolean> {
  const client = new Redis(url, { lazyConnect: true, connectTimeout: 500, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
    return true;
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `probe` until it returns true; resolves with the time it took, rejects after `timeoutMs`. */
export async function waitFor(probe: () => Promise<boolean> | boolean, timeoutMs: number, everyMs = 10): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await probe()) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}
