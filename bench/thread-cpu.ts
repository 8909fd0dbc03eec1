// CPU time of a server process by thread group, read from /proc/<pid>/task/*/stat: the main
// thread (JavaScript, the event loop), V8's platform workers (concurrent and parallel GC, and
// background compilation), libuv's thread pool (fs, crypto, dns.lookup, zlib), and the rest
// (the delayed-task scheduler, the inspector's signal thread, worker_threads).
import { readdirSync, readFileSync } from 'node:fs';

export interface ThreadGroups {
  main: number;
  v8: number;
  pool: number;
  other: number;
}

/** The whole process (every thread, ended ones included) and its live threads by group, in ms. */
export interface ProcessCpu {
  total: number;
  groups: ThreadGroups;
}

const CLOCK_TICKS_PER_SECOND = 100;
/** Node's default --v8-pool-size: the platform workers it starts beside the main thread. */
const V8_PLATFORM_WORKERS = 4;

/** utime + stime of a /proc stat line, in ms. */
function statCpuMs(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND; // utime, stime (fields 14 and 15)
}

const readOrEmpty = (file: string) => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return ''; // the thread ended between the listing and the read
  }
};

/**
 * Which group each thread is in. Node 22 and later name their threads (`MainThread`,
 * `V8Worker`, `libuv-worker`); Node 20 leaves every thread named after the process, and then the
 * order they were started in tells: after the main thread, the delayed-task scheduler, the four
 * V8 platform workers and the inspector's signal thread are started before any JavaScript runs;
 * libuv starts its pool on the first job given to it, so the threads after those are the pool
 * (a worker_thread started later would be counted there too: the bench's scenarios start none).
 */
export function classifyThreads(pid: number, threads: Array<{ tid: number; comm: string }>): Map<number, keyof ThreadGroups> {
  const groups = new Map<number, keyof ThreadGroups>();
  const named = threads.some((t) => t.comm === 'V8Worker' || t.comm === 'MainThread' || t.comm === 'libuv-worker');
  const others = threads.filter((t) => t.tid !== pid).sort((a, b) => a.tid - b.tid);
  groups.set(pid, 'main');
  others.forEach((thread, i) => {
    if (named) groups.set(thread.tid, thread.comm === 'V8Worker' ? 'v8' : thread.comm === 'libuv-worker' ? 'pool' : 'other');
    else groups.set(thread.tid, i >= 1 && i <= V8_PLATFORM_WORKERS ? 'v8' : i === V8_PLATFORM_WORKERS + 1 ? 'other' : 'pool');
  });
  return groups;
}

/** Each live thread's CPU so far, in ms, with the process's total. */
export function readProcessCpu(pid: number): { total: number; threads: Map<number, number>; groups: Map<number, keyof ThreadGroups> } {
  const total = statCpuMs(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  const listed = readdirSync(`/proc/${pid}/task`).map((name) => {
    const tid = Number(name);
    return { tid, comm: readOrEmpty(`/proc/${pid}/task/${tid}/comm`).trim(), stat: readOrEmpty(`/proc/${pid}/task/${tid}/stat`) };
  });
  const live = listed.filter((t) => t.stat !== '');
  const threads = new Map(live.map((t) => [t.tid, statCpuMs(t.stat)]));
  return { total, threads, groups: classifyThreads(pid, live) };
}

/** A reading to subtract from later: see cpuPer1000Since. */
export type CpuReading = ReturnType<typeof readProcessCpu>;

/**
 * CPU ms per 1000 of `requests` since `before`, for the process and for each thread group, to a
 * tenth. A thread started since counts from zero; one that ended since is in the total only.
 */
export function cpuPer1000Since(pid: number, before: CpuReading, requests: number): ProcessCpu {
  const now = readProcessCpu(pid);
  const per1000 = (ms: number) => Math.round((ms / Math.max(1, requests)) * 10_000) / 10;
  const groups: ThreadGroups = { main: 0, v8: 0, pool: 0, other: 0 };
  for (const [tid, ms] of now.threads) groups[now.groups.get(tid) ?? 'other'] += ms - (before.threads.get(tid) ?? 0);
  return {
    total: per1000(now.total - before.total),
    groups: { main: per1000(groups.main), v8: per1000(groups.v8), pool: per1000(groups.pool), other: per1000(groups.other) },
  };
}
