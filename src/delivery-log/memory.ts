import { LRUCache } from 'lru-cache';
import { DELIVERY_LOG_MAX_AGE_MS, InvalidCursorError, targetKey, type DeliveryEntry, type DeliveryLog, type DeliveryPage, type LogTarget } from './delivery-log';

interface Stored {
  seq: number;
  atMs: number;
  entry: DeliveryEntry;
}

export interface MemoryDeliveryLogOptions {
  /** Entries kept per trigger or channel (DELIVERY_LOG_MAX). */
  maxEntries: number;
  /** Triggers and channels with a log; past it the least recently written log is forgotten. */
  maxTargets: number;
  now?: () => number;
}

/**
 * Embedded mode: each log is an array, oldest first, trimmed to `maxEntries` on append; the
 * logs are an LRU of `maxTargets`, so memory stays under maxTargets × maxEntries entries.
 */
export class MemoryDeliveryLog implements DeliveryLog {
  private readonly logs: LRUCache<string, Stored[]>;
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
      log = [];
      this.logs.set(key, log);
    }
    log.push({ seq: ++this.seq, atMs: this.now(), entry });
    if (log.length > this.options.maxEntries) log.splice(0, log.length - this.options.maxEntries);
  }

  async page(target: LogTarget, limit: number, cursor?: string): Promise<DeliveryPage> {
    const before = cursor === undefined ? Infinity : parseCursor(cursor);
    const oldest = this.now() - DELIVERY_LOG_MAX_AGE_MS;
    const log = this.logs.peek(targetKey(target)) ?? [];
    const entries: Stored[] = [];
    for (let i = log.length - 1; i >= 0 && entries.length <= limit; i--) {
      const stored = log[i];
      if (stored.atMs < oldest) break;
      if (stored.seq < before) entries.push(stored);
    }
    const more = entries.length > limit;
    const shown = entries.slice(0, limit);
    return { entries: shown.map((s) => s.entry), nextCursor: more ? String(shown[shown.length - 1].seq) : null };
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
