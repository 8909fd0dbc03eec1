import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface Server {
  child: ChildProcess;
  port: number;
  /** The gateway's admin listener (/metrics); the other targets have none and answer /stats on `port`. */
  adminPort?: number;
  output(): string;
  stop(): Promise<void>;
}

/** Starts a server process and resolves once it logs `listening` with its port. */
export function startServer(nodeBinary: string, script: string, env: Record<string, string>, timeoutMs = 20_000): Promise<Server> {
  const child = spawn(nodeBinary, [script], {
    env: { PATH: process.env.PATH ?? '', PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const onData = (chunk: Buffer) => (output = (output + chunk).slice(-20_000));
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL'); // not left running beside the next cells
      reject(new Error(`${script} did not start:\n${output}`));
    }, timeoutMs);
    const poll = setInterval(() => {
      const match = output.match(/"port":(\d+)/);
      if (match && output.includes('listening')) {
        clearInterval(poll);
        clearTimeout(timer);
        const adminPort = output.match(/"adminPort":(\d+)/)?.[1];
        resolve({
          child,
          port: Number(match[1]),
          ...(adminPort && { adminPort: Number(adminPort) }),
          output: () => output,
          stop: () => stopChild(child),
        });
      }
    }, 25);
    child.on('exit', (code) => {
      clearInterval(poll);
      clearTimeout(timer);
      reject(new Error(`${script} exited ${code}:\n${output}`));
    });
  });
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
