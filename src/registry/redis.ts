import { randomUUID } from 'node:crypto';
import type { Logger } from '../observability/logger';
import { StoreUnavailableError } from '../store-error';
import type { RedisClient, RedisConnection } from '../redis/connection';
import { SecretUnreadableError, type SecretsCipher } from '../secrets/cipher';
import { SECRET_FIELDS } from '../secrets/fields';
import { SealedFields } from '../secrets/sealed-fields';
import { RegistryCache, type RegistryCacheLimits } from './cache';
import { ChangeTracker } from './change-tracker';
import type { Collection, Page, Registry } from './registry';
import type { StoredChannel, StoredTrigger } from './schemas';

type Kind = 'triggers' | 'channels';

export interface RedisRegistryOptions {
  /**
   * How long a cached read (a value or "not found") is trusted without a newer confirmation
   * that no change was missed. Default 800 ms; see the comment on RedisRegistry.
   */
  cacheTtlMs?: number;
  /** How often the change counter is polled. Default a quarter of cacheTtlMs. */
  confirmEveryMs?: number;
  /** Most ids found kept per collection (least recently used dropped first). Default 100 000. */
  maxCacheEntries?: number;
  /** Most ids not found kept per collection. Default 10 000. */
  maxMissingEntries?: number;
  /** Seals SECRET_FIELDS at rest (SECRETS_KEY); without it they are stored as they are. */
  cipher?: SecretsCipher;
}

/**
 * The registry's keys. A change writes a collection's hash and id set and the version counter
 * in one script, so on a Redis Cluster they share the hash tag `{registry}` (one slot). On a
 * single Redis the names stay as they always were: no rename on upgrade.
 */
export function registryKeys(prefix: string, clustered: boolean) {
  const base = `${prefix}${clustered ? '{registry}' : 'registry'}`;
  return {
    hash: (kind: Kind) => `${base}:${kind}`,
    ids: (kind: Kind) => `${base}:${kind}:ids`,
    version: `${base}:version`,
    fileHash: `${base}:triggers-file:sha256`,
    /** A pub/sub channel, not a key: no slot. */
    changes: `${prefix}registry:changes`,
  };
}

type RegistryKeys = ReturnType<typeof registryKeys>;

/** How many stored records a reseal pass looked at, rewrote, and could not open. */
export interface ResealReport {
  checked: number;
  resealed: number;
  unreadable: number;
}

const STALE_WARN_EVERY_MS = 10_000;
const UNREADABLE_LOG_EVERY_MS = 10_000;
const RESEAL_PAGE = 200;

/** Replaces a value only if it is still the one that was read (another process may have written since). */
const COMPARE_AND_SET = `
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
  return 1
end
return 0`;

/**
 * A put ('put'), create-if-absent ('putnx') or delete ('del'): the hash, the id set, and for
 * a real change the version counter and the change message carrying the new version.
 * KEYS: hash, ids, version. ARGV: op, id, value, channel, message without its closing brace.
 * Returns { changed (0/1), version (0 when nothing changed) }.
 */
const WRITE = `
local changed
if ARGV[1] == 'del' then
  changed = redis.call('HDEL', KEYS[1], ARGV[2])
  redis.call('ZREM', KEYS[2], ARGV[2])
else
  if ARGV[1] == 'put' then
    redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
    changed = 1
  else
    changed = redis.call('HSETNX', KEYS[1], ARGV[2], ARGV[3])
  end
  redis.call('ZADD', KEYS[2], 0, ARGV[2])
end
if changed == 0 then return {0, 0} end
local version = redis.call('INCR', KEYS[3])
redis.call('PUBLISH', ARGV[4], ARGV[5] .. ',"version":' .. version .. '}')
return {1, version}`;

interface WriteCommand {
  igwRegistryWrite(hash: string, ids: string, version: string, op: 'put' | 'putnx' | 'del', id: string, value: string, channel: string, message: string): Promise<[number, number]>;
}

function redisError(error: unknown): StoreUnavailableError {
  const message = error instanceof Error ? error.message : String(error);
  return new StoreUnavailableError(message.startsWith('redis: ') ? message : `redis: ${message}`, { cause: error });
}

/**
 * One collection: values as JSON in one hash (`<prefix>registry:<kind>`), ids in a sorted set
 * with every score 0 (`<prefix>registry:<kind>:ids`) so ZRANGEBYLEX pages them in id order
 * with a stable cursor (the last id of the page), whatever is added or removed in between.
 * Secret fields are sealed in the JSON (SealedFields) and opened when read; the cache holds
 * them open, in this process's memory only.
 */
export class RedisCollection<T> implements Collection<T> {
  private readonly cache: RegistryCache<T>;
  private readonly pending = new Map<string, Promise<T | undefined>>();
  /** Bumped by every invalidation: a read that raced one is returned but not cached. */
  private generation = 0;
  private lastStaleWarnAt = 0;
  private readonly unreadableLoggedAt = new Map<string, number>();
  private readonly hashKey: string;
  private readonly idsKey: string;
  private readonly writes: WriteCommand;

  constructor(
    private readonly client: RedisClient,
    readonly kind: Kind,
    private readonly keys: RegistryKeys,
    /** This process's id in the change messages, so it skips its own (already applied). */
    private readonly origin: string,
    private readonly tracker: ChangeTracker,
    ttlMs: number,
    limits: RegistryCacheLimits,
    private readonly logger: Logger,
    private readonly fields: SealedFields = new SealedFields(kind, []),
  ) {
    this.hashKey = keys.hash(kind);
    this.idsKey = keys.ids(kind);
    this.cache = new RegistryCache(tracker, ttlMs, limits);
    client.defineCommand('igwRegistryWrite', { numberOfKeys: 3, lua: WRITE });
    this.writes = client as unknown as WriteCommand;
  }

  async get(id: string): Promise<T | undefined> {
    const cached = this.cache.fresh(id, Date.now());
    if (cached) return cached.value;
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
    await this.write('put', id, this.encode(id, value));
  }

  async putIfAbsent(id: string, value: T): Promise<boolean> {
    return this.write('putnx', id, this.encode(id, value));
  }

  async delete(id: string): Promise<boolean> {
    return this.write('del', id, '');
  }

  /** Cached ids, found and not found (for tests and the bench). */
  get cached(): { found: number; missing: number } {
    return this.cache.size;
  }

  private async write(op: 'put' | 'putnx' | 'del', id: string, value: string): Promise<boolean> {
    let changed: number;
    let version: number;
    try {
      const message = JSON.stringify({ kind: this.kind, id, origin: this.origin }).slice(0, -1);
      [changed, version] = await this.writes.igwRegistryWrite(this.hashKey, this.idsKey, this.keys.version, op, id, value, this.keys.changes, message);
    } catch (error) {
      throw redisError(error);
    }
    if (changed === 1) {
      this.invalidate(id);
      this.tracker.apply(Number(version));
    }
    return changed === 1;
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
        if (raw !== null && raw !== undefined) items.push({ id, value: this.decode(id, raw) });
      });
      return { items, nextCursor: ids.length > limit ? pageIds[pageIds.length - 1] : null };
    } catch (error) {
      if (error instanceof SecretUnreadableError) throw error;
      throw redisError(error);
    }
  }

  /**
   * Rewrites every stored record whose secrets are in clear or sealed under an older key so
   * they are sealed under the current one (after SECRETS_KEY is first set, or rotated). Each
   * rewrite is a compare-and-set, so a change made meanwhile by the admin API is never undone;
   * several processes may run it at once. The cached (open) values stay valid.
   */
  async resealStored(shouldStop: () => boolean = () => false): Promise<ResealReport> {
    const report: ResealReport = { checked: 0, resealed: 0, unreadable: 0 };
    let min = '-';
    for (;;) {
      if (shouldStop()) return report;
      const ids = await this.client.zrangebylex(this.idsKey, min, '+', 'LIMIT', 0, RESEAL_PAGE);
      if (ids.length === 0) return report;
      const raws = await this.client.hmget(this.hashKey, ...ids);
      for (const [i, id] of ids.entries()) {
        const raw = raws[i];
        if (raw === null || raw === undefined) continue;
        report.checked += 1;
        const stored: unknown = JSON.parse(raw);
        if (!this.fields.needsReseal(stored)) continue;
        let value: T;
        try {
          value = this.fields.open(id, stored) as T;
        } catch (error) {
          if (!(error instanceof SecretUnreadableError)) throw error;
          report.unreadable += 1;
          this.logUnreadable(id, error);
          continue;
        }
        const written = await this.client.eval(COMPARE_AND_SET, 1, this.hashKey, id, raw, this.encode(id, value));
        if (written === 1) report.resealed += 1;
      }
      min = `(${ids[ids.length - 1]}`;
    }
  }

  private encode(id: string, value: T): string {
    return JSON.stringify(this.fields.seal(id, value));
  }

  /** Throws SecretUnreadableError (logged) for a secret no key of this process opens. */
  private decode(id: string, raw: string): T {
    try {
      return this.fields.open(id, JSON.parse(raw)) as T;
    } catch (error) {
      if (error instanceof SecretUnreadableError) this.logUnreadable(id, error);
      throw error;
    }
  }

  /** Once per id per 10 s: a sender retrying against a broken record must not flood the log. */
  private logUnreadable(id: string, error: SecretUnreadableError): void {
    const now = Date.now();
    if (now - (this.unreadableLoggedAt.get(id) ?? 0) < UNREADABLE_LOG_EVERY_MS) return;
    if (this.unreadableLoggedAt.size >= 1000) this.unreadableLoggedAt.clear();
    this.unreadableLoggedAt.set(id, now);
    this.logger.error(
      { collection: this.kind, id, kid: error.kid, err: { message: error.message } },
      'registry: a stored secret cannot be opened; set the key that sealed it as SECRETS_KEY or SECRETS_KEY_PREVIOUS, or store the record again',
    );
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
    this.cache.expireAll();
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
      const stale = this.cache.any(id);
      if (stale) {
        this.warnStale(error);
        return stale.value;
      }
      throw redisError(error);
    }
    const value = raw === null ? undefined : this.decode(id, raw);
    if (generation === this.generation) this.cache.remember(id, value, sentAt);
    return value;
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
}

/**
 * Triggers and channels in Redis, read through a cache in each process.
 *
 * A change must be in force on every process within 1 s (CONTRACT §8), and a registry of any
 * size must be served from the cache: 100,000 triggers hit at random must cost no Redis read
 * per request. Three mechanisms:
 * 1. Every put/delete runs one script: the write, an INCR of the registry's version counter
 *    and a PUBLISH of `{ kind, id, origin, version }` on `<prefix>registry:changes`. Every
 *    process's subscriber drops that entry: normally a change is seen within milliseconds.
 * 2. Pub/sub is fire-and-forget: a message sent while a subscriber is disconnected, or whose
 *    connection silently died, is lost. So each process also reads the version counter every
 *    `confirmEveryMs` (200 ms) and checks that it has applied every version up to it
 *    (ChangeTracker). If so, its whole cache is confirmed as of that read; a version still
 *    missing at the next read was lost, and every entry is expired (read again when used).
 * 3. A cached entry, found or not found, is served only while its own read or the last
 *    confirmation is younger than `cacheTtlMs` (800 ms). While the counter cannot be read
 *    (a frozen event loop, Redis unreachable) entries therefore age out as before, and the
 *    1 s promise holds whatever happens to pub/sub or to the polls. All entries are also
 *    expired whenever the subscriber (re)connects.
 * The cost is one GET per process per 200 ms, whatever the registry's size or traffic.
 *
 * Unknown ids are cached too, in their own bounded LRU (maxMissingEntries), so a flood of
 * unknown paths never pushes out known ones and a repeated unknown path costs no read.
 * Concurrent misses of one id share one HGET.
 *
 * When Redis is unreachable get() answers from the cache, even past its TTL (nobody can
 * change the registry meanwhile, unless only this process is cut off); with nothing cached it
 * rejects with `redis: <reason>` and the route answers 503. put/delete/list reject.
 */
export class RedisRegistry implements Registry {
  readonly triggers: RedisCollection<StoredTrigger>;
  readonly channels: RedisCollection<StoredChannel>;
  private readonly keys: RegistryKeys;
  private readonly origin = randomUUID();
  private readonly tracker = new ChangeTracker();
  private readonly confirmEveryMs: number;
  private confirmTimer?: NodeJS.Timeout;
  private confirming?: Promise<void>;
  private subscriber?: RedisClient;
  private subscribing?: Promise<boolean>;
  private started = false;
  private closed = false;
  private readonly cipher?: SecretsCipher;
  /** The reseal pass started by start() (with SECRETS_KEY), for close() and tests to await. */
  resealing?: Promise<void>;

  constructor(
    private readonly connection: RedisConnection,
    prefix: string,
    private readonly logger: Logger,
    options: RedisRegistryOptions = {},
  ) {
    const ttl = options.cacheTtlMs ?? 800;
    this.confirmEveryMs = options.confirmEveryMs ?? Math.max(10, Math.floor(ttl / 4));
    const limits = { maxEntries: options.maxCacheEntries ?? 100_000, maxMissing: options.maxMissingEntries ?? 10_000 };
    this.keys = registryKeys(prefix, connection.isCluster);
    const client = connection.client;
    this.cipher = options.cipher;
    const collection = <T>(kind: Kind) =>
      new RedisCollection<T>(client, kind, this.keys, this.origin, this.tracker, ttl, limits, logger, new SealedFields(kind, SECRET_FIELDS[kind], options.cipher));
    this.triggers = collection<StoredTrigger>('triggers');
    this.channels = collection<StoredChannel>('channels');
  }

  /** Subscribes to changes. Never fails: while Redis is down the SUBSCRIBE waits in the queue. */
  async start(): Promise<void> {
    if (this.started || this.closed) return;
    this.started = true;
    if (this.cipher) {
      this.logger.info({ kid: this.cipher.currentKid }, 'registry: secrets are sealed at rest with SECRETS_KEY');
      this.resealing = this.resealAll();
    } else {
      this.logger.warn('SECRETS_KEY is not set: channel and provider secrets are stored in Redis in plain text');
    }
    const subscriber = this.connection.subscriber();
    this.subscriber = subscriber;
    subscriber.on('message', this.onMessage);
    subscriber.on('ready', this.onReconnect);
    const subscribed = this.subscribe(subscriber);
    void this.confirm();
    this.confirmTimer = setInterval(() => void this.confirm(), this.confirmEveryMs);
    this.confirmTimer.unref();
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
        if (this.tracker.polled(version, sentAt) === 'reset') {
          this.triggers.expireAll();
          this.channels.expireAll();
        }
      } catch {
        // Redis unreachable: nothing is confirmed, entries age out (and are served stale
        // only while reads fail too).
      } finally {
        this.confirming = undefined;
      }
    })();
    return this.confirming;
  }

  async ping(): Promise<void> {
    await this.connection.ping();
  }

  async appliedFileHash(): Promise<string | undefined> {
    try {
      return (await this.connection.client.get(this.keys.fileHash)) ?? undefined;
    } catch (error) {
      throw redisError(error);
    }
  }

  async setAppliedFileHash(hash: string): Promise<void> {
    try {
      await this.connection.client.set(this.keys.fileHash, hash);
    } catch (error) {
      throw redisError(error);
    }
  }

  /** Seals what is stored in clear or under SECRETS_KEY_PREVIOUS; logs the outcome, never throws. */
  private async resealAll(): Promise<void> {
    for (const collection of [this.triggers, this.channels]) {
      try {
        const report = await collection.resealStored(() => this.closed);
        if (report.resealed > 0 || report.unreadable > 0) {
          const log = report.unreadable > 0 ? this.logger.warn.bind(this.logger) : this.logger.info.bind(this.logger);
          log({ collection: collection.kind, ...report }, 'registry: stored secrets resealed under SECRETS_KEY');
        }
      } catch (error) {
        if (this.closed) return;
        this.logger.warn(
          { collection: collection.kind, err: { message: redisError(error).message } },
          'registry: resealing stored secrets failed; it is tried again at the next start',
        );
      }
    }
  }

  /** Stops listening; the connection itself belongs to (and is closed by) the container. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.confirmTimer);
    await this.resealing;
    await this.confirming;
    const subscriber = this.subscriber;
    if (!subscriber) return;
    subscriber.off('message', this.onMessage);
    subscriber.off('ready', this.onReconnect);
    // Not awaited: a Redis that stopped answering must not hold a shutdown.
    if (subscriber.status === 'ready') void subscriber.unsubscribe(this.keys.changes).catch(() => undefined);
    this.triggers.clear();
    this.channels.clear();
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
      if (typeof id === 'string' && kind === 'triggers') this.triggers.invalidate(id);
      else if (typeof id === 'string' && kind === 'channels') this.channels.invalidate(id);
      else {
        // not ours to understand: be safe
        this.triggers.clear();
        this.channels.clear();
      }
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
    this.triggers.expireAll();
    this.channels.expireAll();
    if (this.subscriber && !this.closed) void this.subscribe(this.subscriber);
  };
}
