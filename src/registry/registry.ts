import type { Lifecycle } from '../lifecycle';
import type { StoredChannel, StoredTrigger } from './schemas';

export interface Page<T> {
  items: Array<{ id: string; value: T }>;
  /** Opaque; pass back to get the next page. null on the last page. */
  nextCursor: string | null;
}

/** A keyed collection, listed in id order. */
export interface Collection<T> {
  get(id: string): Promise<T | undefined>;
  put(id: string, value: T): Promise<void>;
  /** Stores the value only when the id is absent; true when it was stored. */
  putIfAbsent(id: string, value: T): Promise<boolean>;
  delete(id: string): Promise<boolean>;
  list(limit: number, cursor?: string): Promise<Page<T>>;
}

/** Triggers and channels. A change through any process is in force everywhere within 1 s. */
export interface Registry extends Lifecycle {
  readonly triggers: Collection<StoredTrigger>;
  readonly channels: Collection<StoredChannel>;
  /** SHA-256 of the TRIGGERS_FILE last applied in full (see seed-file.ts), if any. */
  appliedFileHash(): Promise<string | undefined>;
  setAppliedFileHash(hash: string): Promise<void>;
}
