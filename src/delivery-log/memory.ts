import { LRUCache } from 'lru-cache';
import { DELIVERY_LOG_MAX_AGE_MS, InvalidCursorError, targetKey, type DeliveryEntry, type DeliveryLog, type DeliveryPage, type LogTarget } from './delivery-log';

/**
 * One target's last `capacity` entries in a ring: `next` is where the next entry goes (and,
 * once full, the oldest entry). An append writes three slots and allocates nothing.
 */
class Ring {
  readonly entries: DeliveryEntry[] = [];
  readonly seqs: number[] = [];
  readonly atMs: number[] = [];
  next = 0;

  constructor(private readonly capacity: number) {}

  push(entry: DeliveryEntry, seq: number, atMs: number): void {
    const i = this.next;
    this.entries[i] = entry;
    this.seqs[i] = seq;
    this.atMs[i] = atMs;
    this.next = i + 1 === this.capacity ? 0 : i + 1;
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

export interface MemoryDeliveryLogOptions {
  /** Entries kept per trigger or channel (DELIVERY_LOG_MAX). */
  maxEntries: number;
  /** Triggers and channels with a log; past it the least recently written log is forgotten. */
  maxTargets: number;
  now?: () => number;
}

/**
 * Embedded mode: each log is a ring of `maxEntries`; the logs are an LRU of `maxTargets`, so
 * memory stays under maxTargets × maxEntries entries.
 */
export class MemoryDeliveryLog implements DeliveryLog {
  private readonly logs: LRUCache<string, Ring>;
  private readonly now: () => number;
  private seq = 0;

  constructor(private readonly options: MemoryDeliveryLogOptions) {
    this.logs = new LRUCache({ max: options.maxTargets });
    this.now = options.now ?? Date.now;
  }

  append(target: LogTarget, entry: DeliveryEntry): void {
    const key = targetKey(target);
    let log = this.logs.get(key);
    if (!log) {
      log = new Ring(this.options.maxEntries);
      this.logs.set(key, log);
    }
    log.push(entry, ++this.seq, this.now());
  }

  async page(target: LogTarget, limit: number, cursor?: string): Promise<DeliveryPage> {
    const before = cursor === undefined ? Infinity : parseCursor(cursor);
    const oldest = this.now() - DELIVERY_LOG_MAX_AGE_MS;
    const log = this.logs.peek(targetKey(target));
    const entries: DeliveryEntry[] = [];
    let lastSeq = 0;
    let more = false;
    for (let k = 0; log && k < log.size; k++) {
      const i = log.at(k);
      if (log.atMs[i] < oldest) break;
      if (log.seqs[i] >= before) continue;
      if (entries.length === limit) {
        more = true;
        break;
      }
      entries.push(log.entries[i]);
      lastSeq = log.seqs[i];
    }
    return { entries, nextCursor: more ? String(lastSeq) : null };
  }

  async start(): Promise<void> {}
  async ping(): Promise<void> {}
  async close(): Promise<void> {
    this.logs.clear();
  }
}

function parseCursor(cursor: string): number {
  if (!/^[0-9]{1,15}$/.test(cursor)) throw new InvalidCursorError();
  return Number(cursor);
}
