import type { RedisClient } from '../redis/connection';
import {
  DELIVERY_LOG_MAX_AGE_MS,
  InvalidCursorError,
  targetKey,
  unauthenticatedShare,
  type DeliveryEntry,
  type DeliveryLog,
  type DeliveryPage,
  type LogShare,
  type LogTarget,
} from './delivery-log';
import { mergedPage, parseCursor, type StreamRow } from './redis-page';

/** Entries waiting for their flush or for Redis's answer; past it an entry is counted lost at once. */
export const DEFAULT_MAX_BUFFERED = 10_000;

export interface RedisDeliveryLogOptions {
  prefix: string;
  /** Entries kept per trigger or channel (DELIVERY_LOG_MAX). */
  maxEntries: number;
  /** Called once for each entry that could not be written. */
  onLost(error: unknown): void;
  /** Bound of entries held in memory (buffered or written but unanswered); DEFAULT_MAX_BUFFERED by default. */
  maxBuffered?: number;
  now?: () => number;
}

/**
 * Appends ARGV[3..] in order, the last XADD trimming the stream to exactly ARGV[1] entries,
 * then renews the stream's expiry: one command for all of a stream's entries of one flush.
 */
const APPEND_LUA = `
local last = #ARGV
for i = 3, last - 1 do redis.call('XADD', KEYS[1], '*', 'e', ARGV[i]) end
redis.call('XADD', KEYS[1], 'MAXLEN', '=', ARGV[1], '*', 'e', ARGV[last])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

interface ScriptCommands {
  igwDeliveryLogAppend(key: string, maxEntries: string, ttlMs: string, ...entries: string[]): Promise<number>;
}

class BufferFullError extends Error {
  constructor() {
    super('delivery log buffer full');
    this.name = 'BufferFullError';
  }
}

/**
 * Production: one Redis Stream per trigger or channel registration and share (the main one and
 * the unauthenticated refusals'), shared by every pod. `append` only
 * buffers the entry; once the callback that appended it has run (process.nextTick) the
 * buffer goes out as one script call per stream carrying all of that stream's new entries in
 * order (a stream is one key, so this holds on a Redis Cluster too). So a request adds at most
 * one pipelined command (contract §13), and under load many requests share one. Nothing
 * awaits the writes; an entry that cannot be written (Redis down, buffer full) is counted by
 * `onLost` and dropped. Reads skip entries older than 7 days (a stream written to every day
 * never expires as a whole).
 */
export class RedisDeliveryLog implements DeliveryLog {
  private readonly now: () => number;
  private readonly scripts: ScriptCommands;
  private readonly maxEntries: string;
  private readonly ttlMs = String(DELIVERY_LOG_MAX_AGE_MS);
  private readonly maxBuffered: number;
  private readonly unauthenticatedMax: string;
  /** Per stream key: its bound and the entries waiting for the next flush, in order. */
  private pending = new Map<string, { max: string; entries: string[] }>();
  /** Entries in `pending` plus those written and not yet answered. */
  private held = 0;
  private flushScheduled = false;
  private readonly writes = new Set<Promise<void>>();

  constructor(
    private readonly client: RedisClient,
    private readonly options: RedisDeliveryLogOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.maxEntries = String(options.maxEntries);
    this.unauthenticatedMax = String(unauthenticatedShare(options.maxEntries));
    this.maxBuffered = options.maxBuffered ?? DEFAULT_MAX_BUFFERED;
    // EVAL the first time on each socket, EVALSHA after (and again EVAL after a NOSCRIPT).
    client.defineCommand('igwDeliveryLogAppend', { numberOfKeys: 1, lua: APPEND_LUA });
    this.scripts = client as unknown as ScriptCommands;
  }

  append(target: LogTarget, entry: DeliveryEntry, share: LogShare = 'main'): void {
    try {
      if (this.held >= this.maxBuffered) return this.options.onLost(new BufferFullError());
      const key = this.key(target, share);
      const batch = this.pending.get(key);
      if (batch) batch.entries.push(JSON.stringify(entry));
      else this.pending.set(key, { max: share === 'main' ? this.maxEntries : this.unauthenticatedMax, entries: [JSON.stringify(entry)] });
      this.held++;
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        // Not setImmediate: ioredis's auto-pipeline of this turn often runs first, and a command
        // issued after it waits for the next turn and goes out in a socket write of its own.
        process.nextTick(this.flushNow);
      }
    } catch (error) {
      this.options.onLost(error);
    }
  }

  /** Both shares read in one round trip (two pipelined XREVRANGEs) and merged newest first (redis-page.ts). */
  async page(target: LogTarget, limit: number, cursor?: string): Promise<DeliveryPage> {
    const from = cursor === undefined ? undefined : parseCursor(cursor, this.now());
    const oldest = String(Math.max(0, this.now() - DELIVERY_LOG_MAX_AGE_MS));
    const read = (share: LogShare, newest: string) =>
      this.client.xrevrange(this.key(target, share), newest, oldest, 'COUNT', limit + 1) as Promise<StreamRow[]>;
    let rows: [StreamRow[], StreamRow[]];
    try {
      rows = await Promise.all([read('main', from?.main ?? '+'), read('unauthenticated', from?.unauthenticated ?? '+')]);
    } catch (error) {
      // Belt and braces: parseCursor lets through only ids Redis accepts.
      if (/invalid stream id/i.test(String((error as Error)?.message))) throw new InvalidCursorError();
      throw error;
    }
    return mergedPage(rows[0], rows[1], limit);
  }

  async start(): Promise<void> {}
  async ping(): Promise<void> {}

  /** Writes what is buffered and waits for every write's answer (the connection closes after). */
  async close(): Promise<void> {
    this.flush();
    while (this.writes.size > 0) await Promise.allSettled([...this.writes]);
  }

  private readonly flushNow = () => this.flush();

  private flush(): void {
    this.flushScheduled = false;
    if (this.pending.size === 0) return;
    const batches = this.pending;
    this.pending = new Map();
    for (const [key, { max, entries }] of batches) {
      // Entries the stream's trim would drop at once are not sent: they are not lost, only superseded.
      const bound = Number(max);
      if (entries.length > bound) this.held -= entries.length - bound;
      this.write(key, entries.length > bound ? entries.slice(entries.length - bound) : entries, max);
    }
  }

  private write(key: string, sent: string[], max: string): void {
    const settled = () => {
      this.held -= sent.length;
      this.writes.delete(write);
    };
    const lost = (error: unknown) => {
      for (let i = 0; i < sent.length; i++) this.options.onLost(error);
    };
    let reply: Promise<number>;
    try {
      reply = this.scripts.igwDeliveryLogAppend(key, max, this.ttlMs, ...sent);
    } catch (error) {
      reply = Promise.reject(error);
    }
    const write: Promise<void> = reply.then(settled, (error: unknown) => {
      settled();
      lost(error);
    });
    this.writes.add(write);
  }

  /** `deliveries:trigger:<path>[:<registration>]`, and the unauthenticated share beside it. */
  private key(target: LogTarget, share: LogShare): string {
    const shareKey = share === 'main' ? '' : 'unauthenticated:';
    return `${this.options.prefix}deliveries:${shareKey}${targetKey(target)}`;
  }
}
