import { LRUCache } from 'lru-cache';
import type { ChangeTracker } from './change-tracker';

export interface CacheEntry<T> {
  /** undefined: the id was not found. */
  value: T | undefined;
  /** When the read that produced it was sent. */
  readAt: number;
  /** Set when changes may have been missed: used only while Redis cannot be read. */
  expired: boolean;
}

export interface RegistryCacheLimits {
  /** Most ids found kept per collection (least recently used dropped first). */
  maxEntries: number;
  /** Most ids not found kept per collection: a flood of unknown paths never pushes out known ones. */
  maxMissing: number;
}

/**
 * One collection's cache in this process: found ids and ids not found, each in its own bounded
 * LRU. An entry is fresh while its read, or the tracker's last confirmation that no change
 * was missed, is younger than `ttlMs`.
 */
export class RegistryCache<T> {
  private readonly found: LRUCache<string, CacheEntry<T>>;
  private readonly missing: LRUCache<string, CacheEntry<T>>;

  constructor(
    private readonly tracker: ChangeTracker,
    private readonly ttlMs: number,
    limits: RegistryCacheLimits,
  ) {
    this.found = new LRUCache({ max: limits.maxEntries });
    this.missing = new LRUCache({ max: limits.maxMissing });
  }

  /** The entry, if it may be served without asking Redis. */
  fresh(id: string, now: number): CacheEntry<T> | undefined {
    const entry = this.found.get(id) ?? this.missing.get(id);
    if (!entry || entry.expired) return undefined;
    return now - Math.max(entry.readAt, this.tracker.confirmedAt) < this.ttlMs ? entry : undefined;
  }

  /** The entry however old: the answer while Redis cannot be read. */
  any(id: string): CacheEntry<T> | undefined {
    return this.found.peek(id) ?? this.missing.peek(id);
  }

  remember(id: string, value: T | undefined, readAt: number): void {
    const entry = { value, readAt, expired: false };
    if (value === undefined) {
      this.found.delete(id);
      this.missing.set(id, entry);
    } else {
      this.missing.delete(id);
      this.found.set(id, entry);
    }
  }

  delete(id: string): void {
    this.found.delete(id);
    this.missing.delete(id);
  }

  expireAll(): void {
    for (const entry of this.found.values()) entry.expired = true;
    for (const entry of this.missing.values()) entry.expired = true;
  }

  clear(): void {
    this.found.clear();
    this.missing.clear();
  }

  get size(): { found: number; missing: number } {
    return { found: this.found.size, missing: this.missing.size };
  }
}
