import type { Logger } from '../observability/logger';

const FIRST_PAUSE_MS = 500;
const MAX_PAUSE_MS = 5000;

export interface CleanupOptions {
  /** Removes everything stored under one key (its object and any unfinished multipart upload); rejects when the store fails. */
  clean(key: string): Promise<void>;
  logger: Logger;
  /** Keys still to clean, after each change. */
  onPending(count: number): void;
  /** Most keys kept for a later try; past it a key is left to the bucket's lifecycle rule (and logged). */
  maxPending?: number;
}

/**
 * Keys the store could not clean when a request ended (the store was down), tried again in the
 * background until they are gone: a pause that doubles up to 5 s, or at once when `kick` says
 * the store answers again. Bounded; what a crash loses is left to the bucket's lifecycle rule.
 */
export class CleanupQueue {
  private readonly pending = new Set<string>();
  private timer?: NodeJS.Timeout;
  private pause = FIRST_PAUSE_MS;
  private sweeping?: Promise<void>;
  private closed = false;
  private readonly running = new Set<Promise<void>>();

  constructor(private readonly options: CleanupOptions) {}

  get size(): number {
    return this.pending.size;
  }

  /** Cleans the keys now; those that fail are kept for later. Never rejects. */
  cleanNow(keys: string[]): Promise<void> {
    const running = Promise.all(
      keys.map(async (key) => {
        try {
          await this.options.clean(key);
        } catch (error) {
          this.later(key, error);
        }
      }),
    ).then(() => undefined);
    this.running.add(running);
    void running.finally(() => this.running.delete(running));
    return running;
  }

  later(key: string, error: unknown): void {
    const max = this.options.maxPending ?? 10_000;
    if (this.pending.size >= max) {
      this.options.logger.error({ key, err: message(error) }, 'file store cleanup queue full: left to the bucket lifecycle rule');
      return;
    }
    this.options.logger.warn({ key, err: message(error) }, 'file store cleanup failed; retrying in the background');
    this.pending.add(key);
    this.options.onPending(this.pending.size);
    this.schedule();
  }

  /** The store answered: try what is pending now instead of after the pause. */
  kick(): void {
    if (this.pending.size === 0 || this.sweeping || this.closed) return;
    this.pause = FIRST_PAUSE_MS;
    clearTimeout(this.timer);
    this.timer = undefined;
    void this.sweep();
  }

  /** One last try (bounded by the store's own timeouts), then stops. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await Promise.all(this.running);
    await this.sweeping;
    if (this.pending.size > 0) await this.sweep();
    if (this.pending.size > 0) {
      this.options.logger.error({ keys: [...this.pending] }, 'file store cleanup unfinished at shutdown: left to the bucket lifecycle rule');
    }
  }

  private schedule(): void {
    if (this.timer || this.sweeping || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.sweep();
    }, this.pause);
    this.timer.unref();
  }

  private sweep(): Promise<void> {
    this.sweeping ??= (async () => {
      let failed = false;
      for (const key of [...this.pending]) {
        try {
          await this.options.clean(key);
          this.pending.delete(key);
        } catch {
          failed = true;
        }
      }
      this.options.onPending(this.pending.size);
      this.pause = failed ? Math.min(2 * this.pause, MAX_PAUSE_MS) : FIRST_PAUSE_MS;
    })().finally(() => {
      this.sweeping = undefined;
      if (this.pending.size > 0) this.schedule();
    });
    return this.sweeping;
  }
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
