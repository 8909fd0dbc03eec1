import { LogThrottle } from '../observability/log-throttle';
import type { Logger } from '../observability/logger';
import type { RedisClient } from '../redis/connection';
import { SecretUnreadableError } from '../secrets/cipher';
import { SealedFields } from '../secrets/sealed-fields';
import { RegistryCache, type RegistryCacheLimits } from './cache';
import type { ChangeTracker } from './change-tracker';
import { redisError, type Kind, type RegistryKeys } from './redis-keys';
import type { Collection, Page } from './registry';
import { resealStored, type ResealReport } from './reseal';
import { StoredCodec } from './stored-codec';

const STALE_WARN_EVERY_MS = 10_000;

/**
 * A put ('put'), create-if-absent ('putnx') or delete ('del'): the hash, the id set, and for
 * a real change the version counter and the change message carrying the new version.
 * A put over a stored record keeps that record's registration id, the first key of its JSON
 * (registration.ts), or none if it had none; a new record keeps the id minted for it.
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
    local value = ARGV[3]
    local previous = redis.call('HGET', KEYS[1], ARGV[2])
    local minted = string.match(value, '^{"registrationId":"[%w_-]+",')
    if previous and minted then
      local kept = string.match(previous, '^{"registrationId":"[%w_-]+",') or '{'
      value = kept .. string.sub(value, #minted + 1)
    end
    redis.call('HSET', KEYS[1], ARGV[2], value)
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
  private readonly staleWarnings = new LogThrottle(STALE_WARN_EVERY_MS, 1);
  private readonly hashKey: string;
  private readonly idsKey: string;
  private readonly writes: WriteCommand;
  private readonly codec: StoredCodec<T>;

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
    fields: SealedFields = new SealedFields(kind, []),
  ) {
    this.hashKey = keys.hash(kind);
    this.idsKey = keys.ids(kind);
    this.cache = new RegistryCache(tracker, ttlMs, limits);
    this.codec = new StoredCodec<T>(kind, fields, logger);
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
    await this.write('put', id, this.codec.encode(id, value));
  }

  async putIfAbsent(id: string, value: T): Promise<boolean> {
    return this.write('putnx', id, this.codec.encode(id, value));
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
        if (raw !== null && raw !== undefined) items.push({ id, value: this.codec.decode(id, raw) });
      });
      return { items, nextCursor: ids.length > limit ? pageIds[pageIds.length - 1] : null };
    } catch (error) {
      if (error instanceof SecretUnreadableError) throw error;
      throw redisError(error);
    }
  }

  /** Seals every stored record under the current SECRETS_KEY (see reseal.ts). */
  resealStored(shouldStop: () => boolean = () => false): Promise<ResealReport> {
    return resealStored({ client: this.client, hashKey: this.hashKey, idsKey: this.idsKey, codec: this.codec }, shouldStop);
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
    const value = raw === null ? undefined : this.codec.decode(id, raw);
    if (generation === this.generation) this.cache.remember(id, value, sentAt);
    return value;
  }

  private warnStale(error: unknown): void {
    if (!this.staleWarnings.firstInWindow('stale')) return;
    this.logger.warn(
      { collection: this.kind, err: { message: redisError(error).message } },
      'registry: redis unreachable, serving cached entries',
    );
  }
}
