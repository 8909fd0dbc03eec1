import { extname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { SchemaViolation, WorkerJob, WorkerReply } from './messages';

export interface CheckPoolLimits {
  workers: number;
  /** How long compiling one schema may take: at PUT beyond it the schema is refused. */
  compileMs: number;
  /** How long checking one input may take once its schema is compiled. */
  checkMs: number;
  /** How long a job may wait for a free worker before it is refused (503 busy). */
  queueMs: number;
  /** A worker's heap; beyond it the worker dies (and is replaced), never the process. */
  heapMb: number;
}

export type CheckOutcome =
  | { kind: 'done'; errors: SchemaViolation[] }
  /** Over a time or memory budget; `errors` is the first violation when one was found before. */
  | { kind: 'over-budget'; errors?: SchemaViolation[]; problem: string }
  | { kind: 'unusable'; problem: string }
  | { kind: 'busy' };

const LAZY_COMPILE_SLACK = 3;
const MIN_HEAP_MB = 16;
/** A worker loads ajv and compiles the meta-schema before it is ready: well under a second, unless the machine is starved. */
const START_MS = 10_000;

type Job = (
  | { op: 'compile'; hash: string; schema: Record<string, unknown> }
  | { op: 'check'; hash: string; schema: Record<string, unknown>; input: string }
) & {
  /**
   * Whose job it is (a delivery's workspace): one owner's jobs run on at most all workers but
   * one, so a tenant whose schema or senders make every check cost its whole budget can hold
   * neither the whole pool nor another tenant's checks queued behind its own (contract §13.1).
   */
  owner?: string;
};

interface Pending {
  job: WorkerJob;
  /** Posted only when the worker answers `missing`: a check goes without it first. */
  schema: Record<string, unknown>;
  queuedAt: number;
  owner?: string;
  resolve: (outcome: CheckOutcome) => void;
  first?: SchemaViolation[];
}

interface Slot {
  worker?: Worker;
  /** The worker has loaded its code: a job's budget counts from when a ready worker gets it. */
  ready: boolean;
  running?: Pending;
  timer?: NodeJS.Timeout;
}

/**
 * The workers that compile schemas and check inputs (contract §13.1): the main thread never
 * runs a schema, so no schema and no body can hold /healthz or another tenant's request. A
 * job over its deadline, or a worker over its heap, ends the worker (a new one is started for
 * the next job) and the job's answer says so.
 */
export class CheckPool {
  private readonly slots: Slot[];
  private readonly queue: Pending[] = [];
  private nextId = 1;
  /** How many workers one owner's jobs may hold at once. */
  private readonly perOwner: number;

  /** `spawn` starts a worker running check-worker.ts; tests may stand in one that fails to start. */
  constructor(
    readonly limits: CheckPoolLimits,
    private readonly spawn: (heapMb: number) => Worker = spawnWorker,
  ) {
    // Below a few MB V8 cannot even deserialize a worker's startup snapshot, and that aborts the
    // whole process (Node 22: "GC during deserialization"), not the worker.
    if (limits.heapMb < MIN_HEAP_MB) throw new RangeError(`a schema worker needs at least ${MIN_HEAP_MB} MB of heap`);
    this.slots = Array.from({ length: limits.workers }, () => ({ ready: false }));
    this.perOwner = Math.max(1, limits.workers - 1);
  }

  run(job: Job): Promise<CheckOutcome> {
    return new Promise((resolve) => {
      const id = this.nextId++;
      const posted: WorkerJob = job.op === 'check' ? { id, op: 'check', hash: job.hash, input: job.input } : { ...job, id };
      this.queue.push({ job: posted, schema: job.schema, queuedAt: Date.now(), owner: job.owner, resolve });
      this.dispatch();
    });
  }

  /** Ends every worker (tests; the process's own exit ends them too). */
  async close(): Promise<void> {
    await Promise.all(this.slots.map((slot) => this.retire(slot, { kind: 'busy' })));
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (this.queue.length === 0) break;
      if (!slot.worker) this.start(slot);
      if (!slot.ready || slot.running) continue;
      const pending = this.nextFresh();
      if (!pending) break;
      slot.running = pending;
      this.arm(slot, pending.job.op === 'compile' ? this.limits.compileMs : this.limits.checkMs);
      slot.worker!.postMessage(pending.job);
    }
    // A worker with work (starting for a queued job, or running one) keeps the process alive; an idle one never does.
    for (const slot of this.slots) {
      if (slot.running || !slot.ready) slot.worker?.ref();
      else slot.worker?.unref();
    }
  }

  /**
   * The oldest queued job whose owner holds fewer than its share of the workers; jobs that have
   * waited too long are answered busy on the way. Jobs of an owner at its share stay queued, in order.
   */
  private nextFresh(): Pending | undefined {
    const now = Date.now();
    for (let i = 0; i < this.queue.length; ) {
      const pending = this.queue[i];
      if (now - pending.queuedAt > this.limits.queueMs) {
        this.queue.splice(i, 1);
        pending.resolve({ kind: 'busy' });
      } else if (pending.owner !== undefined && this.running(pending.owner) >= this.perOwner) {
        i++;
      } else {
        this.queue.splice(i, 1);
        return pending;
      }
    }
    return undefined;
  }

  private running(owner: string): number {
    let count = 0;
    for (const slot of this.slots) if (slot.running?.owner === owner) count++;
    return count;
  }

  private start(slot: Slot): void {
    const worker = this.spawn(this.limits.heapMb);
    slot.worker = worker;
    slot.ready = false;
    // A worker that does not start within the queue's wait is ended: its jobs are answered, not held.
    const startTimer = setTimeout(() => void worker.terminate(), Math.max(this.limits.queueMs, START_MS));
    worker.on('message', (reply: WorkerReply | 'ready') => {
      if (slot.worker !== worker) return;
      if (reply !== 'ready') return this.onReply(slot, reply);
      clearTimeout(startTimer);
      slot.ready = true;
      this.dispatch();
    });
    worker.on('error', () => undefined); // 'exit' follows and answers the job
    worker.on('exit', () => {
      clearTimeout(startTimer);
      if (slot.worker !== worker) return;
      const started = slot.ready;
      slot.worker = undefined;
      slot.ready = false;
      if (!started) return this.failQueue(); // a worker that cannot start would be restarted forever
      this.finish(slot, overBudget(slot.running, `needed more than the ${this.limits.heapMb} MB heap its worker has`));
    });
  }

  /** The gateway's own failure, not the job's: answered busy (503), never a verdict on the sender's input. */
  private failQueue(): void {
    for (let pending = this.queue.shift(); pending; pending = this.queue.shift()) pending.resolve({ kind: 'busy' });
  }

  private onReply(slot: Slot, reply: WorkerReply): void {
    const running = slot.running;
    if (!running || running.job.id !== reply.id) return;
    switch (reply.stage) {
      case 'missing':
        return slot.worker!.postMessage({ ...running.job, schema: running.schema });
      case 'compiling':
        // A schema compiled within its budget at PUT; here it may share a busier CPU: some slack.
        return this.arm(slot, this.limits.compileMs * LAZY_COMPILE_SLACK);
      case 'compiled':
        return this.arm(slot, this.limits.checkMs);
      case 'first':
        running.first = reply.errors;
        return;
      case 'done':
        return this.finish(slot, { kind: 'done', errors: reply.errors });
      case 'unusable':
        return this.finish(slot, { kind: 'unusable', problem: reply.problem });
      case 'failed':
        return this.finish(slot, overBudget(running, `failed (${reply.problem})`));
    }
  }

  private arm(slot: Slot, ms: number): void {
    clearTimeout(slot.timer);
    slot.timer = setTimeout(() => void this.retire(slot, overBudget(slot.running, `took longer than ${ms} ms`)), ms);
  }

  /** Answers the running job, ends the worker (its next job gets a new one). */
  private async retire(slot: Slot, outcome: CheckOutcome | undefined): Promise<void> {
    const worker = slot.worker;
    slot.worker = undefined;
    slot.ready = false;
    this.finish(slot, outcome);
    await worker?.terminate();
  }

  private finish(slot: Slot, outcome: CheckOutcome | undefined): void {
    clearTimeout(slot.timer);
    const running = slot.running;
    slot.running = undefined;
    if (running && outcome) running.resolve(outcome);
    this.dispatch();
  }
}

function overBudget(running: Pending | undefined, problem: string): CheckOutcome | undefined {
  if (!running) return undefined;
  return running.first ? { kind: 'over-budget', errors: running.first, problem } : { kind: 'over-budget', problem };
}

/**
 * The worker runs check-worker.js beside this file. Under the tests this file is TypeScript
 * (run through @swc/jest): the worker then compiles its TypeScript the same way, with @swc/core.
 */
function spawnWorker(heapMb: number): Worker {
  const resourceLimits = { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: Math.max(8, Math.round(heapMb / 8)), stackSizeMb: 4 };
  const entry = join(__dirname, `check-worker${extname(__filename)}`);
  if (entry.endsWith('.js')) return new Worker(entry, { resourceLimits });
  const source = `
    const { readFileSync } = require('node:fs');
    const { transformSync } = require(${JSON.stringify(require.resolve('@swc/core'))});
    require.extensions['.ts'] = (module, filename) => {
      const options = { filename, module: { type: 'commonjs' }, jsc: { parser: { syntax: 'typescript' }, target: 'es2022' } };
      module._compile(transformSync(readFileSync(filename, 'utf8'), options).code, filename);
    };
    require(${JSON.stringify(entry)});`;
  return new Worker(source, { eval: true, resourceLimits });
}
