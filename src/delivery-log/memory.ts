import { LRUCache } from 'lru-cache';
import {
  DELIVERY_LOG_MAX_AGE_MS,
  InvalidCursorError,
  targetKey,
  unauthenticatedShare,
  type DeliveryEntry,
  type DeliveryLog,
  type DeliveryPage,
  type LogShare,
  type LogTarget,
} from './delivery-log';
import { serializedBytes } from './entry-bounds';

/** Serialized size of all entries held, in all logs: entries are at most 4 KiB, so counting them alone is not a bound. */
export const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;

/**
 * One target's last `capacity` entries in a ring: `next` is where the next entry goes (and,
 * once full, the oldest entry). An append writes four slots and allocates nothing.
 */
class Ring {
  readonly entries: DeliveryEntry[] = [];
  readonly seqs: number[] = [];
  readonly atMs: number[] = [];
  readonly sizes: number[] = [];
  next = 0;

  constructor(private readonly capacity: number) {}

  /** Returns the size of the entry it overwrote (0 while the ring fills). */
  push(entry: DeliveryEntry, seq: number, atMs: number, size: number): number {
    const i = this.next;
    const overwritten = this.sizes[i] ?? 0;
    this.entries[i] = entry;
    this.seqs[i] = seq;
    this.atMs[i] = atMs;
    this.sizes[i] = size;
    this.next = i + 1 === this.capacity ? 0 : i + 1;
    return overwritten;
  }

  get size(): number {
    return this.entries.length;
  }

  /** Index of the k-th newest entry (k = 0 is the newest). */
  at(k: number): number {
    const i = this.next - 1 - k;
    return i >= 0 ? i : i + this.entries.length;
  }
}

/** One target's log: its main share and, once it had one, its unauthenticated refusals apart. */
interface TargetLog {
  main?: Ring;
  unauthenticated?: Ring;
  /** Serialized size of the entries in both rings. */
  bytes: number;
}

/** Walks a ring newest first from the first entry older than `before` (a seq). */
class Walker {
  private k = 0;

  constructor(
    private readonly ring: Ring | undefined,
    before: number,
    private readonly oldest: number,
  ) {
    while (this.ring && this.k < this.ring.size && this.ring.seqs[this.ring.at(this.k)] >= before) this.k++;
  }

  /** The index of the current entry, or -1 when none is left (or it is older than 7 days). */
  get current(): number {
    if (!this.ring || this.k >= this.ring.size) return -1;
    const i = this.ring.at(this.k);
    return this.ring.atMs[i] < this.oldest ? -1 : i;
  }

  seq(): number {
    const i = this.current;
    return i < 0 ? -1 : this.ring!.seqs[i];
  }

  take(): DeliveryEntry {
    const entry = this.ring!.entries[this.current];
    this.k++;
    return entry;
  }
}

export interface MemoryDeliveryLogOptions {
  /** Entries kept per trigger or channel (DELIVERY_LOG_MAX). */
  maxEntries: number;
  /** Triggers and channels with a log; past it the least recently written log is forgotten. */
  maxTargets: number;
  /** Serialized size of all entries; past it too the least recently written logs are forgotten. DEFAULT_MAX_BYTES by default. */
  maxBytes?: number;
  now?: () => number;
}

/**
 * Embedded mode: each log is a ring of `maxEntries` and one of `unauthenticatedShare(maxEntries)`
 * unauthenticated refusals; the logs are an LRU of `maxTargets` holding at most `maxBytes` of
 * entries (serialized), so memory stays under maxTargets × (maxEntries + share) entries and
 * maxBytes. One sequence numbers the entries of both rings:
 * a page merges them by it, and the cursor is the last one shown.
 */
export class MemoryDeliveryLog implements DeliveryLog {
  private readonly logs: LRUCache<string, TargetLog>;
  private readonly now: () => number;
  private readonly maxBytes: number;
  private seq = 0;
  /** Serialized size of every entry held. */
  private bytes = 0;

  constructor(private readonly options: MemoryDeliveryLogOptions) {
    this.logs = new LRUCache({ max: options.maxTargets, dispose: (log) => void (this.bytes -= log.bytes) });
    this.now = options.now ?? Date.now;
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  }

  /** Serialized size of every entry held (for tests). */
  get heldBytes(): number {
    return this.bytes;
  }

  append(target: LogTarget, entry: DeliveryEntry, share: LogShare = 'main'): void {
    const key = targetKey(target);
    // A refusal does not make its log recent: a flood of them must not evict others' acceptances.
    let log = share === 'main' ? this.logs.get(key) : this.logs.peek(key);
    if (!log) {
      log = { bytes: 0 };
      this.logs.set(key, log);
    }
    const capacity = share === 'main' ? this.options.maxEntries : unauthenticatedShare(this.options.maxEntries);
    const ring = (log[share] ??= new Ring(capacity));
    const size = serializedBytes(entry);
    const grown = size - ring.push(entry, ++this.seq, this.now(), size);
    log.bytes += grown;
    this.bytes += grown;
    // The log just written is the most recent: the least recently written ones go first.
    while (this.bytes > this.maxBytes && this.logs.size > 1) this.logs.pop();
  }

  async page(target: LogTarget, limit: number, cursor?: string): Promise<DeliveryPage> {
    const before = cursor === undefined ? Infinity : this.parseCursor(cursor);
    const oldest = this.now() - DELIVERY_LOG_MAX_AGE_MS;
    const log = this.logs.peek(targetKey(target));
    const main = new Walker(log?.main, before, oldest);
    const unauthenticated = new Walker(log?.unauthenticated, before, oldest);
    const entries: DeliveryEntry[] = [];
    let lastSeq = 0;
    for (;;) {
      const next = main.seq() > unauthenticated.seq() ? main : unauthenticated;
      const seq = next.seq();
      if (seq < 0) return { entries, nextCursor: null };
      if (entries.length === limit) return { entries, nextCursor: String(lastSeq) };
      entries.push(next.take());
      lastSeq = seq;
    }
  }

  async start(): Promise<void> {}
  async ping(): Promise<void> {}
  async close(): Promise<void> {
    this.logs.clear();
  }

  /** A position this log can have given out: 1 up to the last entry's number; anything else is a 400. */
  private parseCursor(cursor: string): number {
    if (!/^[0-9]{1,15}$/.test(cursor)) throw new InvalidCursorError();
    const seq = Number(cursor);
    if (seq < 1 || seq > this.seq) throw new InvalidCursorError();
    return seq;
  }
}
