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
import { Writable } from 'node:stream';
import Redis from 'ioredis';
import pino, { type Logger } from 'pino';
import { reservePort, type ReservedPort } from './ports';

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

/** Every key under the prefix (SCAN, so never blocking the shared server). */
export async function keysUnder(client: Redis, prefix: string): Promise<string[]> {
  const pattern = `${prefix.replace(/[*?[\]\\]/g, (c) => `\\${c}`)}*`;
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
    cursor = next;
    found.push(...keys);
  } while (cursor !== '0');
  return found;
}

/** Deletes every key under the prefix. */
export async function deleteKeys(client: Redis, prefix: string): Promise<number> {
  const keys = await keysUnder(client, prefix);
  return keys.length > 0 ? client.del(...keys) : 0;
}

/**
 * Lets `ms` pass for every key under the prefix, as far as their expiry goes: each key's time
 * to live is shortened by `ms` (PEXPIRE), and a key whose time is up is deleted, as Redis
 * would. Tests of leases and windows use long times and this instead of waiting for a short
 * one to run out, so two round trips never race an expiry. Fails on a key without an expiry.
 */
export async function elapseKeys(client: Redis, prefix: string, ms: number): Promise<void> {
  for (const key of await keysUnder(client, prefix)) {
    const left = await client.pttl(key);
    if (left === -2) continue; // gone meanwhile
    if (left === -1) throw new Error(`${key} has no expiry: it would never be forgotten`);
    if (left > ms) await client.pexpire(key, left - ms);
    else await client.del(key);
  }
}

/** The time to live of every key under the prefix in ms (-1: none), by key. */
export async function keyTtls(client: Redis, prefix: string): Promise<Map<string, number>> {
  const ttls = new Map<string, number>();
  for (const key of await keysUnder(client, prefix)) ttls.set(key, await client.pttl(key));
  return ttls;
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

/**
 * A port of 127.0.0.1 nothing listens on, reserved for this process until it exits (see
 * ports.ts: never one the kernel could hand to another socket meanwhile).
 */
export async function freePort(): Promise<number> {
  return (await reservePort()).port;
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

/** redis-server could not bind its port: another process has it. */
class PortTakenError extends Error {}

const START_ATTEMPTS = 5;

/**
 * A throw-away redis-server on a port of its own (no persistence), for tests that kill, freeze
 * and restart Redis without touching the shared one. Its port stays reserved for it (see
 * ports.ts) until dispose(), so it can be restarted on the same port. Always dispose() in afterAll.
 */
export class RedisServerProcess {
  private child?: ChildProcess;

  private constructor(private readonly reservation: ReservedPort) {}

  /** Started and answering PING. Should its port be taken meanwhile, it starts on another. */
  static async start(): Promise<RedisServerProcess> {
    requireRedisServerBinary();
    for (let attempt = 1; ; attempt += 1) {
      const server = new RedisServerProcess(await reservePort());
      try {
        await server.start();
        return server;
      } catch (error) {
        await server.dispose();
        if (!(error instanceof PortTakenError) || attempt === START_ATTEMPTS) throw error;
      }
    }
  }

  /** Not started yet: its port is known and kept, so a client can be pointed at a Redis that is not there. */
  static async reserve(): Promise<RedisServerProcess> {
    requireRedisServerBinary();
    return new RedisServerProcess(await reservePort());
  }

  get port(): number {
    return this.reservation.port;
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
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    running.add(child);
    void exited.then(() => running.delete(child));
    this.child = child;
    // Until it answers or exits; the deadline only says when to give up on a server that hangs.
    const deadline = performance.now() + 30_000;
    while (child.exitCode === null && child.signalCode === null && performance.now() < deadline) {
      if (await answersPing(this.url)) return;
      await Promise.race([exited, sleep(20)]);
    }
    await this.stop();
    const message = `redis-server on port ${this.port} did not start: ${output.trim() || 'no answer to PING'}`;
    throw /Address already in use/i.test(output) ? new PortTakenError(message) : new Error(message);
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

  /** Stops the server and gives its port back. */
  async dispose(): Promise<void> {
    await this.stop();
    this.reservation.release();
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
  const started = performance.now();
  for (;;) {
    if (await probe()) return performance.now() - started;
    if (performance.now() - started > timeoutMs) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}
