import type { Logger } from '../observability/logger';
import type { RedisClient, RedisConnection } from '../redis/connection';
import { waitAtMost } from '../wait-at-most';
import type { ChangeTracker } from './change-tracker';
import { redisError, type Kind, type RegistryKeys } from './redis-keys';

/** What a change message may drop from a cache. */
export interface Invalidatable {
  invalidate(id: string): void;
  expireAll(): void;
  clear(): void;
}

/**
 * Keeps this process's caches in step with the other processes' changes: the change messages
 * (pub/sub) drop one entry each, and a poll of the version counter confirms that none was missed
 * or expires everything (see RedisRegistry for why both).
 */
export class ChangeListener {
  private confirmTimer?: NodeJS.Timeout;
  private confirming?: Promise<void>;
  private subscriber?: RedisClient;
  private subscribing?: Promise<boolean>;
  private closed = false;

  constructor(
    private readonly connection: RedisConnection,
    private readonly keys: RegistryKeys,
    /** This process's id in the change messages: its own are skipped (already applied). */
    private readonly origin: string,
    private readonly tracker: ChangeTracker,
    private readonly collections: Record<Kind, Invalidatable>,
    private readonly confirmEveryMs: number,
    private readonly logger: Logger,
  ) {}

  /** Subscribes and starts polling; resolves once subscribed, or after 1 s (a Redis that is down does not hold a start). */
  async start(): Promise<void> {
    const subscriber = this.connection.subscriber();
    this.subscriber = subscriber;
    subscriber.on('message', this.onMessage);
    subscriber.on('ready', this.onReconnect);
    const subscribed = this.subscribe(subscriber);
    void this.confirm();
    this.confirmTimer = setInterval(() => void this.confirm(), this.confirmEveryMs);
    this.confirmTimer.unref();
    await waitAtMost(subscribed, 1000);
  }

  /**
   * Reads the version counter once and confirms the cache, or expires it when a change was
   * missed (see ChangeTracker). One at a time; a failed read confirms nothing.
   */
  confirm(): Promise<void> {
    this.confirming ??= (async () => {
      const sentAt = Date.now();
      try {
        const version = Number((await this.connection.client.get(this.keys.version)) ?? 0);
        if (this.closed) return;
        if (this.tracker.polled(version, sentAt) === 'reset') this.each((c) => c.expireAll());
      } catch {
        // Redis unreachable: nothing is confirmed, entries age out (and are served stale
        // only while reads fail too).
      } finally {
        this.confirming = undefined;
      }
    })();
    return this.confirming;
  }

  /** Stops polling; what arrives from now on is ignored. close() then stops listening. */
  stop(): void {
    this.closed = true;
    clearInterval(this.confirmTimer);
  }

  /** Waits for a poll under way, then stops listening and clears the caches. */
  async close(): Promise<void> {
    this.stop();
    await this.confirming;
    const subscriber = this.subscriber;
    if (!subscriber) return;
    subscriber.off('message', this.onMessage);
    subscriber.off('ready', this.onReconnect);
    // Not awaited: a Redis that stopped answering must not hold a shutdown.
    if (subscriber.status === 'ready') void subscriber.unsubscribe(this.keys.changes).catch(() => undefined);
    this.each((c) => c.clear());
  }

  private each(fn: (collection: Invalidatable) => void): void {
    for (const collection of Object.values(this.collections)) fn(collection);
  }

  private readonly onMessage = (channel: string, message: string): void => {
    if (channel !== this.keys.changes) return;
    let change: { kind?: unknown; id?: unknown; origin?: unknown; version?: unknown };
    try {
      change = JSON.parse(message) as typeof change;
    } catch {
      change = {};
    }
    const { kind, id, origin, version } = change;
    // Our own change was dropped from the cache right after the write succeeded.
    if (origin !== this.origin) {
      if (typeof id === 'string' && (kind === 'triggers' || kind === 'channels')) this.collections[kind].invalidate(id);
      else this.each((c) => c.clear()); // not ours to understand: be safe
    }
    // Messages of versions before the counter (a gateway being upgraded) carry none.
    if (typeof version === 'number' && Number.isSafeInteger(version)) this.tracker.apply(version);
  };

  /**
   * One SUBSCRIBE at a time: one queued while the connection is away is sent (or, cut before
   * its reply, sent again) by ioredis on the next connect.
   */
  private subscribe(subscriber: RedisClient): Promise<boolean> {
    this.subscribing ??= subscriber.subscribe(this.keys.changes).then(
      () => true,
      (error: unknown) => {
        if (!this.closed) this.logger.warn({ err: { message: redisError(error).message } }, 'registry: subscribe failed');
        return false;
      },
    ).finally(() => {
      this.subscribing = undefined;
    });
    return this.subscribing;
  }

  /**
   * Messages may have been missed while the subscriber was away: read everything again. A new
   * connection has no subscriptions (see RedisConnection.subscriber): subscribe again.
   */
  private readonly onReconnect = (): void => {
    this.each((c) => c.expireAll());
    if (this.subscriber && !this.closed) void this.subscribe(this.subscriber);
  };
}
