/**
 * TCP ports for servers a test must start again on the same port (a redis-server it kills and
 * restarts) or point a client at before the server exists. A server that only needs some port
 * listens on 0 instead and says which one it got.
 *
 * A port that listen(0) found free is not safe for this: it comes from the kernel's ephemeral
 * range, which the kernel also hands out as the local port of outgoing connections (a client
 * retrying 127.0.0.1:P may even connect to itself on P), so between "free" and "bound" the port
 * can be taken: `Address already in use`. The ports here come from below the ephemeral range,
 * which the kernel never hands out by itself, and each is reserved across processes (parallel
 * jest workers, other CI runs on the machine) by a lock file that only one process can create.
 * A lock whose process is gone is stale and removed.
 */
import { closeSync, mkdirSync, openSync, readFileSync, readdirSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const LOCK_DIR = join(tmpdir(), 'igw-test-ports');
/** A lock file of a dead process is removed only once it is this old (never one being created). */
const STALE_AFTER_MS = 60_000;
const ATTEMPTS = 200;

export interface ReservedPort {
  readonly port: number;
  /** Gives the port back (idempotent). Reservations still held are given back when the process exits. */
  release(): void;
}

const held = new Map<number, string>();
process.once('exit', () => {
  for (const file of held.values()) unlinkQuietly(file);
});

/** The ports this helper picks from: the 10,000 ports just below the kernel's ephemeral range. */
export function reservablePorts(): { low: number; high: number } {
  let ephemeralLow = 32768;
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(low)) ephemeralLow = low;
  } catch {
    // not Linux: the IANA ephemeral range starts at 49152, 32768 is below both
  }
  const high = ephemeralLow - 1;
  const low = Math.max(1024, high - 10_000);
  if (high - low < 1000) throw new Error(`the ephemeral port range starts at ${ephemeralLow}: too few ports below it for tests`);
  return { low, high };
}

/** A port of 127.0.0.1 that nothing listens on now, reserved for this process until release(). */
export async function reservePort(): Promise<ReservedPort> {
  mkdirSync(LOCK_DIR, { recursive: true });
  removeStaleLocks();
  const { low, high } = reservablePorts();
  for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
    const port = low + Math.floor(Math.random() * (high - low + 1));
    const file = join(LOCK_DIR, `${port}.lock`);
    if (!createLock(file)) continue; // another process holds it
    if (await canListen(port)) {
      held.set(port, file);
      return {
        port,
        release: () => {
          if (held.get(port) !== file) return;
          held.delete(port);
          unlinkQuietly(file);
        },
      };
    }
    unlinkQuietly(file); // something outside the tests uses it
  }
  throw new Error(`no free port to reserve between ${low} and ${high} after ${ATTEMPTS} attempts (locks in ${LOCK_DIR})`);
}

function createLock(file: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'wx');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    writeSync(fd, String(process.pid));
  } finally {
    closeSync(fd);
  }
  return true;
}

function removeStaleLocks(): void {
  for (const name of readdirSync(LOCK_DIR)) {
    if (!name.endsWith('.lock')) continue;
    const file = join(LOCK_DIR, name);
    try {
      const pid = Number(readFileSync(file, 'utf8'));
      const old = Date.now() - statSync(file).mtimeMs > STALE_AFTER_MS;
      if (old && Number.isInteger(pid) && pid > 0 && !isAlive(pid)) unlinkQuietly(file);
    } catch {
      // removed meanwhile, or being written: not stale
    }
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // already gone
  }
}
