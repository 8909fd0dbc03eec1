import type { ClaimResult, CompletedResponse, IdempotencyStore } from './store';

interface Entry {
  bodyHash: string;
  expiresAt: number;
  response?: CompletedResponse;
}

const SWEEP_EVERY_MS = 30_000;

/** Embedded-mode idempotency: one process, entries expire like Redis keys would. */
export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly entries = new Map<string, Entry>();
  private sweeper?: NodeJS.Timeout;

  constructor(private readonly now: () => number = Date.now) {}

  async start(): Promise<void> {
    this.sweeper ??= setInterval(() => this.sweep(), SWEEP_EVERY_MS).unref();
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  async claim(key: string, bodyHash: string, leaseMs: number): Promise<ClaimResult> {
    const existing = this.live(key);
    if (!existing) {
      this.entries.set(key, { bodyHash, expiresAt: this.now() + leaseMs });
      return { state: 'claimed' };
    }
    const sameBody = existing.bodyHash === bodyHash;
    return existing.response
      ? { state: 'completed', sameBody, response: existing.response }
      : { state: 'in_flight', sameBody };
  }

  async complete(key: string, bodyHash: string, response: CompletedResponse, ttlMs: number): Promise<void> {
    this.entries.set(key, { bodyHash, response, expiresAt: this.now() + ttlMs });
  }

  async release(key: string): Promise<void> {
    const existing = this.entries.get(key);
    if (existing && !existing.response) this.entries.delete(key);
  }

  private live(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  private sweep(): void {
    const now = this.now();
    for (const [key, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(key);
  }
}
