import type Redis from 'ioredis';
import type { ClaimResult, CompletedResponse, IdempotencyStore } from './store';

/**
 * One record per key, a JSON string under `<prefix>idem:<key>`:
 *   in flight: { state: 'in_flight', bodyHash }            expires after the lease
 *   completed: { state: 'completed', bodyHash, response }  expires after the window
 */
type StoredRecord =
  | { state: 'in_flight'; bodyHash: string }
  | { state: 'completed'; bodyHash: string; response: CompletedResponse };

const CLAIMED = 'claimed';

/** Atomic claim: store the in-flight record if the key is free, else return what is there. */
const CLAIM_LUA = `
local current = redis.call('GET', KEYS[1])
if current then return current end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return '${CLAIMED}'
`;

/** Drops the key only while it is still in flight: a completed record is never deleted. */
const RELEASE_LUA = `
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local ok, record = pcall(cjson.decode, current)
if ok and type(record) == 'table' and record.state == 'in_flight' then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
`;

interface ScriptCommands {
  igwIdempotencyClaim(key: string, record: string, leaseMs: string): Promise<string>;
  igwIdempotencyRelease(key: string): Promise<number>;
}

/**
 * Idempotency keys in Redis, shared by every process. The scripts are registered with
 * ioredis' defineCommand, which sends EVAL the first time on each socket and EVALSHA after,
 * falling back to EVAL on NOSCRIPT: a Redis restart (script cache flushed) heals by itself.
 *
 * When Redis is unreachable every method rejects within the connection's command timeout
 * (no offline queue); the caller decides (IDEMPOTENCY_ON_STORE_ERROR: accept or refuse).
 */
export class RedisIdempotencyStore implements IdempotencyStore {
  private readonly scripts: ScriptCommands;

  constructor(
    private readonly client: Redis,
    private readonly prefix: string,
  ) {
    client.defineCommand('igwIdempotencyClaim', { numberOfKeys: 1, lua: CLAIM_LUA });
    client.defineCommand('igwIdempotencyRelease', { numberOfKeys: 1, lua: RELEASE_LUA });
    this.scripts = client as unknown as ScriptCommands;
  }

  /** The connection is owned (started and closed) by the container. */
  async start(): Promise<void> {}

  async ping(): Promise<void> {
    try {
      await this.client.ping();
    } catch (error) {
      throw new Error(`redis: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  async close(): Promise<void> {}

  async claim(key: string, bodyHash: string, leaseMs: number): Promise<ClaimResult> {
    const record: StoredRecord = { state: 'in_flight', bodyHash };
    const reply = await this.scripts.igwIdempotencyClaim(this.key(key), JSON.stringify(record), ms(leaseMs));
    if (reply === CLAIMED) return { state: 'claimed' };
    const existing = parseRecord(reply);
    const sameBody = existing.bodyHash === bodyHash;
    return existing.state === 'completed'
      ? { state: 'completed', sameBody, response: existing.response }
      : { state: 'in_flight', sameBody };
  }

  async complete(key: string, bodyHash: string, response: CompletedResponse, ttlMs: number): Promise<void> {
    const record: StoredRecord = { state: 'completed', bodyHash, response };
    await this.client.set(this.key(key), JSON.stringify(record), 'PX', ms(ttlMs));
  }

  async release(key: string): Promise<void> {
    await this.scripts.igwIdempotencyRelease(this.key(key));
  }

  private key(key: string): string {
    return `${this.prefix}idem:${key}`;
  }
}

function ms(value: number): string {
  return String(Math.max(1, Math.ceil(value)));
}

function parseRecord(reply: unknown): StoredRecord {
  const text = Buffer.isBuffer(reply) ? reply.toString('utf8') : reply;
  if (typeof text === 'string') {
    try {
      const record = JSON.parse(text) as StoredRecord;
      if (
        record &&
        typeof record.bodyHash === 'string' &&
        (record.state === 'in_flight' || (record.state === 'completed' && typeof record.response === 'object'))
      ) {
        return record;
      }
    } catch {
      // fall through
    }
  }
  throw new Error('redis: unreadable idempotency record');
}
