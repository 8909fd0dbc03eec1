import { randomUUID } from 'node:crypto';
import type { Logger } from '../observability/logger';
import type { RedisConnection } from '../redis/connection';
import type { SecretsCipher } from '../secrets/cipher';
import { SealedFields } from '../secrets/sealed-fields';
import { ChangeTracker } from './change-tracker';
import { ChangeListener } from './redis-changes';
import { RedisCollection } from './redis-collection';
import { redisError, registryKeys, type Kind, type RegistryKeys } from './redis-keys';
import type { Registry } from './registry';
import { resealAll } from './reseal';
import type { StoredChannel, StoredTrigger } from './schemas';
import { SECRET_FIELDS } from './secret-fields';

export { RedisCollection } from './redis-collection';
export { registryKeys } from './redis-keys';
export type { ResealReport } from './reseal';

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
 *
 * The parts: storage and cache per collection (redis-collection.ts, stored-codec.ts for the
 * sealing), invalidation (redis-changes.ts) and the reseal pass (reseal.ts).
 */
export class RedisRegistry implements Registry {
  readonly triggers: RedisCollection<StoredTrigger>;
  readonly channels: RedisCollection<StoredChannel>;
  private readonly keys: RegistryKeys;
  private readonly changes: ChangeListener;
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
    const confirmEveryMs = options.confirmEveryMs ?? Math.max(10, Math.floor(ttl / 4));
    const limits = { maxEntries: options.maxCacheEntries ?? 100_000, maxMissing: options.maxMissingEntries ?? 10_000 };
    this.keys = registryKeys(prefix, connection.isCluster);
    const origin = randomUUID();
    const tracker = new ChangeTracker();
    this.cipher = options.cipher;
    const collection = <T>(kind: Kind) =>
      new RedisCollection<T>(connection.client, kind, this.keys, origin, tracker, ttl, limits, logger, new SealedFields(kind, SECRET_FIELDS[kind], options.cipher));
    this.triggers = collection<StoredTrigger>('triggers');
    this.channels = collection<StoredChannel>('channels');
    this.changes = new ChangeListener(connection, this.keys, origin, tracker, { triggers: this.triggers, channels: this.channels }, confirmEveryMs, logger);
  }

  /** Subscribes to changes. Never fails: while Redis is down the SUBSCRIBE waits in the queue. */
  async start(): Promise<void> {
    if (this.started || this.closed) return;
    this.started = true;
    if (this.cipher) {
      this.logger.info({ kid: this.cipher.currentKid }, 'registry: secrets are sealed at rest with SECRETS_KEY');
      this.resealing = resealAll([this.triggers, this.channels], this.logger, () => this.closed);
    } else {
      this.logger.warn('SECRETS_KEY is not set: channel and provider secrets are stored in Redis in plain text');
    }
    // A healthy start is subscribed before it serves; a Redis that is down does not hold it.
    await this.changes.start();
  }

  /** Reads the version counter once and confirms the cache, or expires it (see ChangeListener). */
  confirm(): Promise<void> {
    return this.changes.confirm();
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

  /** Stops listening; the connection itself belongs to (and is closed by) the container. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.changes.stop();
    await this.resealing;
    await this.changes.close();
  }
}
