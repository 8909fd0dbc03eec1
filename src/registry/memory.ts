import { keptRegistration } from './registration';
import type { StoredChannel, StoredTrigger } from './schemas';
import type { Collection, Page, Registry } from './registry';

export class MemoryCollection<T> implements Collection<T> {
  private readonly items = new Map<string, T>();

  async get(id: string): Promise<T | undefined> {
    return this.items.get(id);
  }

  /** An update keeps the registration's id (registration.ts). */
  async put(id: string, value: T): Promise<void> {
    this.items.set(id, keptRegistration(this.items.get(id), value));
  }

  async putIfAbsent(id: string, value: T): Promise<boolean> {
    if (this.items.has(id)) return false;
    this.items.set(id, value);
    return true;
  }

  async delete(id: string): Promise<boolean> {
    return this.items.delete(id);
  }

  async list(limit: number, cursor?: string): Promise<Page<T>> {
    const ids = [...this.items.keys()].filter((id) => cursor === undefined || id > cursor).sort();
    const pageIds = ids.slice(0, limit);
    return {
      items: pageIds.map((id) => ({ id, value: this.items.get(id) as T })),
      nextCursor: ids.length > limit ? pageIds[pageIds.length - 1] : null,
    };
  }
}

export class MemoryRegistry implements Registry {
  readonly triggers = new MemoryCollection<StoredTrigger>();
  readonly channels = new MemoryCollection<StoredChannel>();
  private fileHash?: string;
  async start(): Promise<void> {}
  async ping(): Promise<void> {}
  async close(): Promise<void> {}

  async appliedFileHash(): Promise<string | undefined> {
    return this.fileHash;
  }

  async setAppliedFileHash(hash: string): Promise<void> {
    this.fileHash = hash;
  }
}
