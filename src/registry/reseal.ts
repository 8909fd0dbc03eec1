import type { Logger } from '../observability/logger';
import type { RedisClient } from '../redis/connection';
import { SecretUnreadableError } from '../secrets/cipher';
import { redisError } from './redis-keys';
import type { StoredCodec } from './stored-codec';

/** How many stored records a reseal pass looked at, rewrote, and could not open. */
export interface ResealReport {
  checked: number;
  resealed: number;
  unreadable: number;
}

const RESEAL_PAGE = 200;

/** Replaces a value only if it is still the one that was read (another process may have written since). */
const COMPARE_AND_SET = `
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
  return 1
end
return 0`;

/** Where one collection is stored: its hash of values and its sorted set of ids. */
export interface StoredCollection<T> {
  client: RedisClient;
  hashKey: string;
  idsKey: string;
  codec: StoredCodec<T>;
}

/**
 * Rewrites every stored record whose secrets are in clear or sealed under an older key so
 * they are sealed under the current one (after SECRETS_KEY is first set, or rotated). Each
 * rewrite is a compare-and-set, so a change made meanwhile by the admin API is never undone;
 * several processes may run it at once. The cached (open) values stay valid.
 */
export async function resealStored<T>(
  { client, hashKey, idsKey, codec }: StoredCollection<T>,
  shouldStop: () => boolean = () => false,
): Promise<ResealReport> {
  const report: ResealReport = { checked: 0, resealed: 0, unreadable: 0 };
  let min = '-';
  for (;;) {
    if (shouldStop()) return report;
    const ids = await client.zrangebylex(idsKey, min, '+', 'LIMIT', 0, RESEAL_PAGE);
    if (ids.length === 0) return report;
    const raws = await client.hmget(hashKey, ...ids);
    for (const [i, id] of ids.entries()) {
      const raw = raws[i];
      if (raw === null || raw === undefined) continue;
      report.checked += 1;
      const stored: unknown = JSON.parse(raw);
      if (!codec.fields.needsReseal(stored)) continue;
      let value: T;
      try {
        value = codec.open(id, stored);
      } catch (error) {
        if (!(error instanceof SecretUnreadableError)) throw error;
        report.unreadable += 1;
        continue;
      }
      const written = await client.eval(COMPARE_AND_SET, 1, hashKey, id, raw, codec.encode(id, value));
      if (written === 1) report.resealed += 1;
    }
    min = `(${ids[ids.length - 1]}`;
  }
}

/** Seals what is stored in clear or under SECRETS_KEY_PREVIOUS in each collection; logs the outcome, never throws. */
export async function resealAll(
  collections: Array<{ kind: string; resealStored(shouldStop: () => boolean): Promise<ResealReport> }>,
  logger: Logger,
  stopped: () => boolean,
): Promise<void> {
  for (const collection of collections) {
    try {
      const report = await collection.resealStored(stopped);
      if (report.resealed > 0 || report.unreadable > 0) {
        const log = report.unreadable > 0 ? logger.warn.bind(logger) : logger.info.bind(logger);
        log({ collection: collection.kind, ...report }, 'registry: stored secrets resealed under SECRETS_KEY');
      }
    } catch (error) {
      if (stopped()) return;
      logger.warn(
        { collection: collection.kind, err: { message: redisError(error).message } },
        'registry: resealing stored secrets failed; it is tried again at the next start',
      );
    }
  }
}
