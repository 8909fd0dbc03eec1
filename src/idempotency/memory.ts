import { LRUCache } from 'lru-cache';
import { storedResponse, type ClaimResult, type CompletedResponse, type IdempotencyStore } from './store';

interface Entry {
  bodyHash: string;
  /** The claim's owner; kept on the completed record so a repeated completion is a success. */
  owner: string;
  /**
   * The acknowledgement as JSON, as Redis keeps it: one flat string instead of an object tree
   * (and of strings built by concatenation, which V8 keeps as trees too), about a third of
   * the memory, and safe from later changes to the caller's object.
   */
  response?: string;
}

export interface MemoryIdempotencyOptions {
  /** Most keys kept; past it the least recently used key is forgotten first. */
  maxKeys: number;
  /** Most bytes kept (estimated, see entryBytes); past it the least recently used keys are forgotten first. */
  maxBytes?: number;
  /** The clock of the TTLs, for tests. */
  now?: () => number;
}

const SWEEP_EVERY_MS = 30_000;
/** IDEMPOTENCY_MEMORY_MAX_BYTES' default. */
const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;
/** What an entry costs beyond its strings: the cache's slots, the entry object, the TTL bookkeeping. */
const ENTRY_OVERHEAD_BYTES = 200;

/** An entry's heap, estimated from its strings (two bytes a character at worst). */
function entryBytes(entry: Entry, key: string): number {
  return ENTRY_OVERHEAD_BYTES + 2 * (key.length + entry.bodyHash.length + entry.owner.length + (entry.response?.length ?? 0));
}

/**
 * Embedded-mode idempotency: one process, entries expire like Redis keys would, and at most
 * `maxKeys` keys and `maxBytes` bytes are kept (IDEMPOTENCY_MEMORY_MAX_KEYS,
 * IDEMPOTENCY_MEMORY_MAX_BYTES); a completed key keeps only status, event id and a hash of the
 * acknowledgement, so an entry's size never grows with a trigger's `response.body`. A key is "used" when it is claimed,
 * completed or looked up by a retry; when the store is full, the key used longest ago is
 * dropped, in flight or completed, even inside its window. A retry of a dropped key is
 * published again (at least once: the event carries the same idempotencyKey).
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly entries: LRUCache<string, Entry>;
  private sweeper?: NodeJS.Timeout;

  constructor(options: MemoryIdempotencyOptions) {
    this.entries = new LRUCache<string, Entry>({
      max: options.maxKeys,
      maxSize: options.maxBytes ?? DEFAULT_MAX_BYTES,
      sizeCalculation: entryBytes,
      // Read the clock on every check instead of caching it behind a 1 ms timer.
      ttlResolution: 0,
      ...(options.now && { perf: { now: options.now } }),
    });
  }

  async start(): Promise<void> {
    this.sweeper ??= setInterval(() => this.entries.purgeStale(), SWEEP_EVERY_MS).unref();
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  async claim(key: string, owner: string, bodyHash: string, leaseMs: number): Promise<ClaimResult> {
    const existing = this.entries.get(key);
    if (!existing) {
      this.entries.set(key, { bodyHash, owner }, { ttl: ms(leaseMs) });
      return { state: 'claimed' };
    }
    const sameBody = existing.bodyHash === bodyHash;
    return existing.response
      ? { state: 'completed', sameBody, response: JSON.parse(existing.response) as CompletedResponse }
      : { state: 'in_flight', sameBody };
  }

  async complete(key: string, owner: string, bodyHash: string, response: CompletedResponse, ttlMs: number): Promise<boolean> {
    const existing = this.entries.get(key);
    if (existing && existing.owner !== owner) return false;
    this.entries.set(key, { bodyHash, owner, response: JSON.stringify(storedResponse(response)) }, { ttl: ms(ttlMs) });
    return true;
  }

  async release(key: string, owner: string): Promise<void> {
    const existing = this.entries.get(key);
    if (existing && existing.owner === owner && !existing.response) this.entries.delete(key);
  }
}

/**
 * lru-cache's entry is stale once *more* than its ttl has passed; a Redis key with PX n is gone
 * once n ms have passed. One ms less keeps the two alike (and never 0, which means no ttl).
 */
function ms(value: number): number {
  return Math.max(1, Math.ceil(value) - 1);
}
