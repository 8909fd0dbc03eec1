import type { RedisClient } from '../redis/connection';
import { DELIVERY_LOG_MAX_AGE_MS, InvalidCursorError, targetKey, type DeliveryEntry, type DeliveryLog, type DeliveryPage, type LogTarget } from './delivery-log';

const STREAM_ID = /^[0-9]{1,20}-[0-9]{1,20}$/;

export interface RedisDeliveryLogOptions {
  prefix: string;
  /** Entries kept per trigger or channel (DELIVERY_LOG_MAX). */
  maxEntries: number;
  /** Called once for each entry that could not be written. */
  onLost(error: unknown): void;
  now?: () => number;
}

/** XADD trimmed to exactly ARGV[1] entries, then the stream's expiry renewed: one command a request. */
const APPEND_LUA = `
redis.call('XADD', KEYS[1], 'MAXLEN', '=', ARGV[1], '*', 'e', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

interface ScriptCommands {
  igwDeliveryLogAppend(key: string, maxEntries: string, ttlMs: string, entry: string): Promise<number>;
}

/**
 * Production: one Redis Stream per trigger or channel, shared by every pod. Each request adds
 * one command (contract §13): a script that appends the entry (the stream trimmed to exactly
 * `maxEntries`) and renews the stream's 7-day expiry. It goes out in the client's automatic
 * pipeline with the request's other commands and is never awaited by the request. Reads skip
 * entries older than 7 days (a stream written to every day never expires as a whole).
 */
export class RedisDeliveryLog implements DeliveryLog {
  private readonly now: () => number;
  private readonly scripts: ScriptCommands;

  constructor(
    private readonly client: RedisClient,
    private readonly options: RedisDeliveryLogOptions,
  ) {
    this.now = options.now ?? Date.now;
    // EVAL the first time on each socket, EVALSHA after (and again EVAL after a NOSCRIPT).
    client.defineCommand('igwDeliveryLogAppend', { numberOfKeys: 1, lua: APPEND_LUA });
    this.scripts = client as unknown as ScriptCommands;
  }

  append(target: LogTarget, entry: DeliveryEntry): void {
    try {
      this.scripts
        .igwDeliveryLogAppend(this.key(target), String(this.options.maxEntries), String(DELIVERY_LOG_MAX_AGE_MS), JSON.stringify(entry))
        .catch((error: unknown) => this.options.onLost(error));
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

  private key(target: LogTarget): string {
    return `${this.options.prefix}deliveries:${targetKey(target)}`;
  }
}
