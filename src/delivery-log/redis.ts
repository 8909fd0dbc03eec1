import type { RedisClient } from '../redis/connection';
import { DELIVERY_LOG_MAX_AGE_MS, InvalidCursorError, targetKey, type DeliveryEntry, type DeliveryLog, type DeliveryPage, type LogTarget } from './delivery-log';

const STREAM_ID = /^[0-9]{1,20}-[0-9]{1,20}$/;
/** A stream's 7 days are pushed back at most this often by one process (a PEXPIRE per request was a seventh of its Redis commands). */
export const EXPIRY_REFRESH_MS = 60_000;
/** Streams whose last PEXPIRE time is remembered; past it the memory starts over (each stream then gets one PEXPIRE more). */
const REMEMBERED_STREAMS = 10_000;

export interface RedisDeliveryLogOptions {
  prefix: string;
  /** Entries kept per trigger or channel (DELIVERY_LOG_MAX). */
  maxEntries: number;
  /** Called once for each entry that could not be written. */
  onLost(error: unknown): void;
  now?: () => number;
}

/**
 * Production: one Redis Stream per trigger or channel, shared by every pod. Each request adds
 * one XADD (trimmed to exactly `maxEntries`), never awaited by the request; the stream's
 * PEXPIRE of 7 days goes with it at most once per EXPIRY_REFRESH_MS per process, so a stream
 * expires 7 days after its last write to within a minute. Reads skip entries older than 7 days
 * (a stream written to every day never expires as a whole).
 */
export class RedisDeliveryLog implements DeliveryLog {
  private readonly now: () => number;
  /** When this process last sent each stream's PEXPIRE. */
  private readonly expiredAt = new Map<string, number>();

  constructor(
    private readonly client: RedisClient,
    private readonly options: RedisDeliveryLogOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  append(target: LogTarget, entry: DeliveryEntry): void {
    const key = this.key(target);
    try {
      // Two commands, one write: the client's auto-pipelining sends the commands of one tick
      // together. (An explicit pipeline() on ioredis's Cluster made the commands of other
      // callers queued in the same tick fail with "Connection is closed".)
      const added = this.client.xadd(key, 'MAXLEN', '=', String(this.options.maxEntries), '*', 'e', JSON.stringify(entry));
      const expiring = this.refreshExpiry(key);
      Promise.all([added, expiring]).catch((error: unknown) => this.options.onLost(error));
    } catch (error) {
      this.options.onLost(error);
    }
  }

  async page(target: LogTarget, limit: number, cursor?: string): Promise<DeliveryPage> {
    if (cursor !== undefined && !STREAM_ID.test(cursor)) throw new InvalidCursorError();
    const newest = cursor === undefined ? '+' : `(${cursor}`;
    const oldest = String(Math.max(0, this.now() - DELIVERY_LOG_MAX_AGE_MS));
    const rows = await this.client.xrevrange(this.key(target), newest, oldest, 'COUNT', limit + 1);
    const shown = rows.slice(0, limit);
    return {
      entries: shown.map(([, fields]) => JSON.parse(fields[1]) as DeliveryEntry),
      nextCursor: rows.length > limit ? shown[shown.length - 1][0] : null,
    };
  }

  async start(): Promise<void> {}
  async ping(): Promise<void> {}
  async close(): Promise<void> {}

  private refreshExpiry(key: string): Promise<unknown> | undefined {
    const now = this.now();
    const last = this.expiredAt.get(key);
    if (last !== undefined && now - last < EXPIRY_REFRESH_MS) return undefined;
    if (this.expiredAt.size >= REMEMBERED_STREAMS) this.expiredAt.clear();
    this.expiredAt.set(key, now);
    return this.client.pexpire(key, DELIVERY_LOG_MAX_AGE_MS).catch((error: unknown) => {
      this.expiredAt.delete(key); // sent again with the next write
      throw error;
    });
  }

  private key(target: LogTarget): string {
    return `${this.options.prefix}deliveries:${targetKey(target)}`;
  }
}
