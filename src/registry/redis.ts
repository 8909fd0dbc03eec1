import { randomUUID } from 'node:crypto';
import type Redis from 'ioredis';
import type { Logger } from '../observability/logger';
import { StoreUnavailableError } from '../store-error';
import type { RedisConnection } from '../redis/connection';
import type { Collection, Page, Registry } from './registry';
import type { StoredChannel, StoredTrigger } from './schemas';

type Kind = 'triggers' | 'channels';

export interface RedisRegistryOptions {
  /**
   * How long one process trusts a cached read (a value or "not found") without asking Redis.
   * Default 800 ms; see the comment on RedisRegistry for why it stays under 1 s.
   */
  cacheTtlMs?: number;
  /** Most entries kept per collection (oldest dropped first). Default 10 000. */
  maxCacheEntries?: number;
}

interface CacheEntry<T> {
  value: T | undefined;
  expiresAt: number;
}

const STALE_WARN_EVERY_MS = 10_000;

function redisError(error: unknown): StoreUnavailableError {
  const message = error instanceof Error ? error.message : String(error);
  return new StoreUnavailableError(message.startsWith('redis: ') ? message : `redis: ${message}`, { cause: error });
}

/**
 * One collection: values as JSON in one hash (`<prefix>registry:<kind>`), ids in a sorted set
 * with every score 0 (`<prefix>registry:<kind>:ids`) so ZRANGEBYLEX pages them in id order
 * with a stable cursor (the last id of the page), whatever is added or removed in between.
 */
export class RedisCollection<T> implements Collection<T> {
  private readonly cache = new Map<string, CacheEntry<T>>();
  private readonly pending = new Map<string, Promise<T | undefined>>();
  /** Bumped by every invalidation: a read that raced one is returned but not cached. */
  private generation = 0;
  private lastStaleWarnAt = 0;
  private readonly hashKey: string;
  private readonly idsKey: string;

  constructor(
    private readonly client: Redis,
    private readonly kind: Kind,
    prefix: string,
    private readonly channel: string,
    /** This process's id in the change messages, so it skips its own (already applied). */
    private readonly origin: string,
    private readonly ttlMs: number,
    private readonly maxEntries: number,
    private readonly logger: Logger,
  ) {
    this.hashKey = `${prefix}registry:${kind}`;
    this.idsKey = `${prefix}registry:${kind}:ids`;
  }

  async get(id: string): Promise<T | undefined> {
    const cached = this.cache.get(id);
    if (cached && cached.expiresAt > Date.now()) return cached.value;
    // Concurrent misses of one id (a flood on one path) share a single HGET.
    let read = this.pending.get(id);
    if (!read) {
      read = this.read(id);
      this.pending.set(id, read);
      const done = () => {
        if (this.pending.get(id) === read) this.pending.delete(id);
      };
      read.then(done, done);
    }
    return read;
  }

  async put(id: string, value: T): Promise<void> {
    await this.exec(
      this.client
        .multi()
        .hset(this.hashKey, id, JSON.stringify(value))
        .zadd(this.idsKey, 0, id)
        .publish(this.channel, this.message(id)),
    );
    this.invalidate(id);
  }

  async delete(id: string): Promise<boolean> {
    const replies = await this.exec(
      this.client
        .multi()
        .hdel(this.hashKey, id)
        .zrem(this.idsKey, id)
        .publish(this.channel, this.message(id)),
    );
    this.invalidate(id);
    return Number(replies[0]) > 0;
  }

  /** Straight from Redis (the admin API's listing is never served from the cache). */
  async list(limit: number, cursor?: string): Promise<Page<T>> {
    try {
      const min = cursor === undefined ? '-' : `(${cursor}`;
      const ids = await this.client.zrangebylex(this.idsKey, min, '+', 'LIMIT', 0, limit + 1);
      const pageIds = ids.slice(0, limit);
      const raws = pageIds.length > 0 ? await this.client.hmget(this.hashKey, ...pageIds) : [];
      const items: Array<{ id: string; value: T }> = [];
      pageIds.forEach((id, i) => {
        const raw = raws[i];
        // Deleted between the two reads: left out, the cursor still moves past it.
        if (raw !== null && raw !== undefined) items.push({ id, value: JSON.parse(raw) as T });
      });
      return { items, nextCursor: ids.length > limit ? pageIds[pageIds.length - 1] : null };
    } catch (error) {
      throw redisError(error);
    }
  }

  private message(id: string): string {
    return JSON.stringify({ kind: this.kind, id, origin: this.origin });
  }

  /** Drops one cached entry (and any read in flight for it, which may predate the change). */
  invalidate(id: string): void {
    this.generation += 1;
    this.cache.delete(id);
    this.pending.delete(id);
  }

  /** Every entry must be read again, but stays usable as the fallback while Redis is down. */
  expireAll(): void {
    this.generation += 1;
    for (const entry of this.cache.values()) entry.expiresAt = 0;
    this.pending.clear();
  }

  clear(): void {
    this.generation += 1;
    this.cache.clear();
    this.pending.clear();
  }

  private async read(id: string): Promise<T | undefined> {
    const generation = this.generation;
    // The entry's age counts from when the read was sent, so staleness never exceeds ttlMs.
    const sentAt = Date.now();
    let raw: string | null;
    try {
      raw = await this.client.hget(this.hashKey, id);
    } catch (error) {
      const stale = this.cache.get(id);
      if (stale) {
        this.warnStale(error);
        return stale.value;
      }
      throw redisError(error);
    }
    const value = raw === null ? undefined : (JSON.parse(raw) as T);
    if (generation === this.generation) this.remember(id, value, sentAt + this.ttlMs);
    return value;
  }

  private remember(id: string, value: T | undefined, expiresAt: number): void {
    this.cache.delete(id);
    this.cache.set(id, { value, expiresAt });
    if (this.cache.size > this.maxEntries) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
  }

  private warnStale(error: unknown): void {
    const now = Date.now();
    if (now - this.lastStaleWarnAt < STALE_WARN_EVERY_MS) return;
    this.lastStaleWarnAt = now;
    this.logger.warn(
      { collection: this.kind, err: { message: redisError(error).message } },
      'registry: redis unreachable, serving cached entries',
    );
  }

  private async exec(multi: ReturnType<Redis['multi']>): Promise<unknown[]> {
    let replies: Array<[Error | null, unknown]> | null;
    try {
      replies = await multi.exec();
    } catch (error) {
      throw redisError(error);
    }
    if (!replies) throw new StoreUnavailableError('redis: transaction aborted');
    const failed = replies.find(([error]) => error);
    if (failed?.[0]) throw redisError(failed[0]);
    return replies.map(([, reply]) => reply);
  }
}

/**
 * Triggers and channels in Redis, read through a small cache in each process.
 *
 * A change must be in force on every process within 1 s. Two mechanisms:
 * 1. Every put/delete PUBLISHes `{ kind, id, origin }` on `<prefix>registry:changes` (inside the same
 *    MULTI as the write) and every process's subscriber drops that entry: normally the change
 *    is seen within milliseconds.
 * 2. Pub/sub is fire-and-forget: a message sent while a subscriber is disconnected, or whose
 *    connection silently died (no traffic on an idle subscriber reveals it), is lost. So every
 *    cached entry, found or not found, also expires `cacheTtlMs` (800 ms) after its read was
 *    sent. That alone keeps the 1 s promise whatever happens to pub/sub, at the price of one
 *    HGET per hot id per process every 0.8 s, which is nothing for Redis. The other choice
 *    (clear on reconnect + a few seconds of TTL) cannot promise 1 s while a dead subscriber
 *    goes unnoticed. All entries are also expired whenever the subscriber (re)connects.
 *
 * Unknown ids are cached too (briefly, same TTL), so a flood of unknown paths costs one HGET
 * per path per 0.8 s, and concurrent misses of one id share one HGET.
 *
 * When Redis is unreachable get() answers from the cache, even past its TTL (nobody can
 * change the registry meanwhile, unless only this process is cut off); with nothing cached it
 * rejects with `redis: <reason>` and the route answers 503. put/delete/list reject.
 */
export class RedisRegistry implements Registry {
  readonly triggers: RedisCollection<StoredTrigger>;
  readonly channels: RedisCollection<StoredChannel>;
  private readonly channel: string;
  private readonly origin = randomUUID();
  private subscriber?: Redis;
  private started = false;
  private closed = false;

  constructor(
    private readonly connection: RedisConnection,
    prefix: string,
    private readonly logger: Logger,
    options: RedisRegistryOptions = {},
  ) {
    const ttl = options.cacheTtlMs ?? 800;
    const max = options.maxCacheEntries ?? 10_000;
    this.channel = `${prefix}registry:changes`;
    const client = connection.client;
    this.triggers = new RedisCollection(client, 'triggers', prefix, this.channel, this.origin, ttl, max, logger);
    this.channels = new RedisCollection(client, 'channels', prefix, this.channel, this.origin, ttl, max, logger);
  }

  /** Subscribes to changes. Never fails: while Redis is down the SUBSCRIBE waits in the queue. */
  async start(): Promise<void> {
    if (this.started || this.closed) return;
    this.started = true;
    const subscriber = this.connection.subscriber();
    this.subscriber = subscriber;
    subscriber.on('message', this.onMessage);
    subscriber.on('ready', this.onReconnect);
    const subscribed = subscriber.subscribe(this.channel).then(
      () => true,
      (error: unknown) => {
        if (this.closed) return false;
        this.logger.warn({ err: { message: redisError(error).message } }, 'registry: subscribe failed');
        return false;
      },
    );
    // A healthy start is subscribed before it serves; a Redis that is down does not hold it.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      subscribed,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, 1000);
      }),
    ]);
    if (timer) clearTimeout(timer);
  }

  async ping(): Promise<void> {
    await this.connection.ping();
  }

  /** Stops listening; the connection itself belongs to (and is closed by) the container. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const subscriber = this.subscriber;
    if (!subscriber) return;
    subscriber.off('message', this.onMessage);
    subscriber.off('ready', this.onReconnect);
    if (subscriber.status === 'ready') await subscriber.unsubscribe(this.channel).catch(() => undefined);
    this.triggers.clear();
    this.channels.clear();
  }

  private readonly onMessage = (channel: string, message: string): void => {
    if (channel !== this.channel) return;
    try {
      const { kind, id, origin } = JSON.parse(message) as { kind?: unknown; id?: unknown; origin?: unknown };
      // Our own change: the entry was dropped right after the write succeeded.
      if (origin === this.origin) return;
      if (typeof id === 'string' && kind === 'triggers') return this.triggers.invalidate(id);
      if (typeof id === 'string' && kind === 'channels') return this.channels.invalidate(id);
    } catch {
      // not ours to understand: be safe below
    }
    this.triggers.clear();
    this.channels.clear();
  };

  /** Messages may have been missed while the subscriber was away: read everything again. */
  private readonly onReconnect = (): void => {
    this.triggers.expireAll();
    this.channels.expireAll();
  };
}
