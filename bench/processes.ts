import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, fstatSync, mkdtempSync, openSync, readFileSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Server {
  child: ChildProcess;
  port: number;
  /** The gateway's admin listener (/metrics); the other targets have none and answer /stats on `port`. */
  adminPort?: number;
  /** The last 20 KB the server wrote to its standard output and error. */
  output(): string;
  stop(): Promise<void>;
}

const OUTPUT_TAIL_BYTES = 20_000;

/**
 * Starts a server process and resolves once it logs `listening` with its port. Its standard
 * output and error go to a file, not to a pipe this process reads: the gateway writes an access
 * log line per request (about 2 MB/s at 7,500 req/s), and reading it through a pipe took this
 * process 37-77 ms of CPU a second on the two cores the servers and the load generator share,
 * against 2 ms for the floor, which logs nothing per request. A log collector runs beside the
 * gateway in production too, but it is not the gateway's cost; the gateway's own write is
 * still made (synchronously, once per event-loop turn) and still counted in its CPU. The file is
 * kept in memory (/dev/shm where there is one), off the disk the embedded gateway's synced
 * appends go to.
 */
export function startServer(nodeBinary: string, script: string, env: Record<string, string>, timeoutMs = 20_000): Promise<Server> {
  const dir = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'igw-server-'));
  const file = join(dir, 'output.log');
  const fd = openSync(file, 'a');
  let child: ChildProcess;
  try {
    child = spawn(nodeBinary, [script], {
      env: { PATH: process.env.PATH ?? '', PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', fd, fd],
    });
  } finally {
    closeSync(fd); // the child holds its own copy
  }
  const output = () => tail(file, OUTPUT_TAIL_BYTES);
  const removeOutput = () => rmSync(dir, { recursive: true, force: true });
  let started = false;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL'); // not left running beside the next cells
      fail(new Error(`${script} did not start:\n${output()}`));
    }, timeoutMs);
    const poll = setInterval(() => {
      const text = output();
      const match = text.match(/"port":(\d+)/);
      if (match && text.includes('listening')) {
        clearInterval(poll);
        clearTimeout(timer);
        started = true;
        const adminPort = text.match(/"adminPort":(\d+)/)?.[1];
        resolve({
          child,
          port: Number(match[1]),
          ...(adminPort && { adminPort: Number(adminPort) }),
          output,
          stop: () => stopChild(child).finally(removeOutput),
        });
      }
    }, 25);
    const fail = (error: Error) => {
      clearInterval(poll);
      clearTimeout(timer);
      removeOutput();
      reject(error);
    };
    // Once started, an exit is stop()'s to see (the output stays readable until then).
    child.on('exit', (code) => started || fail(new Error(`${script} exited ${code}:\n${output()}`)));
  });
}

/** The last `bytes` of a file (whole lines may be cut at the start), or '' once it is gone. */
function tail(file: string, bytes: number): string {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return '';
  }
  try {
    const size = fstatSync(fd).size;
    const length = Math.min(size, bytes);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    return buffer.toString('utf8');
  } finally {
    closeSync(fd);
  }
}

export function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Samples a process's resident set size every 50 ms; stop() returns the peak in MiB. */
export function sampleRss(pid: number): { stop(): number } {
  let peakKb = 0;
  const read = () => {
    try {
      const match = readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/);
      if (match) peakKb = Math.max(peakKb, Number(match[1]));
    } catch {
      // the process has ended
    }
  };
  read();
  const timer = setInterval(read, 50);
  return {
    stop() {
      clearInterval(timer);
      read();
      return Math.round(peakKb / 1024);
    },
  };
}

const CLOCK_TICKS_PER_SECOND = 100;

/** CPU ms the process used per 1000 of `requests` since `beforeMs` (a cpuTimeMs reading), to a tenth. */
export function cpuMsPer1000Since(pid: number, beforeMs: number, requests: number): number {
  return Math.round(((cpuTimeMs(pid) - beforeMs) / Math.max(1, requests)) * 10_000) / 10;
}

/** User + system CPU time a process has used so far, in ms (from /proc/<pid>/stat). */
export function cpuTimeMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15)
  return (ticks * 1000) / CLOCK_TICKS_PER_SECOND;
}

/** CPU time of the whole machine so far (every core, every process), in ms: busy and in all (busy + idle). */
export function machineCpuMs(): { busy: number; all: number } {
  // user nice system idle iowait irq softirq steal (guest time is counted in user already)
  const ticks = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1, 9).map(Number);
  const all = ticks.reduce((sum, t) => sum + t, 0);
  const idle = ticks[3] + ticks[4] + (ticks[7] ?? 0); // idle, iowait, and time the hypervisor gave to others
  return { busy: ((all - idle) * 1000) / CLOCK_TICKS_PER_SECOND, all: (all * 1000) / CLOCK_TICKS_PER_SECOND };
}

/**
 * What the whole machine spent during a cell that answered `requests`: CPU ms per 1000 requests
 * (the server, the load generator, Redis, the broker, the kernel: everything on the cores they
 * share) and the share of the machine's capacity that was busy, in percent.
 */
export function machineUseSince(before: { busy: number; all: number }, requests: number): { msPer1000: number; busyPercent: number } {
  const now = machineCpuMs();
  const busy = now.busy - before.busy;
  return {
    msPer1000: Math.round((busy / Math.max(1, requests)) * 1000),
    busyPercent: Math.round((busy / Math.max(1, now.all - before.all)) * 100),
  };
}
