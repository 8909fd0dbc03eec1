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
  delete(id: string): Promise<boolean>;
  list(limit: number, cursor?: string): Promise<Page<T>>;
}

/** Triggers and channels. A change through any process is in force everywhere within 1 s. */
export interface Registry extends Lifecycle {
  readonly triggers: Collection<StoredTrigger>;
  readonly channels: Collection<StoredChannel>;
}
