import type { RedisClient } from '../redis/connection';
import { sendAtOnce, TurnBatch } from '../redis/turn-batch';
import { CompletionWriter } from './redis-completions';
import { storedResponse, type ClaimResult, type CompletedResponse, type IdempotencyStore } from './store';

/**
 * One record per key, a JSON string under `<prefix>idem:<key>`, always starting with its state
 * and its owner (the scripts compare that prefix, so they never decode a record):
 *   in flight: {"state":"in_flight","owner":…,"bodyHash":…}              expires after the lease
 *   completed: {"state":"completed","owner":…,"bodyHash":…,"response":…}  expires after the window
 */
/** `owner` is absent only on records written by the version before owners. */
type StoredRecord =
  | { state: 'in_flight'; owner?: string; bodyHash: string }
  | { state: 'completed'; owner?: string; bodyHash: string; response: CompletedResponse };

const CLAIMED = 'claimed';

/** A claim as the script takes it: the key (with the store's prefix), the in-flight record, the lease in ms. */
type Claim = [key: string, record: string, leaseMs: string];

/**
 * Atomic claims, each key in turn: store the in-flight record if the key is free, else return
 * what is there. KEYS[i]: a key; ARGV[2i-1]: its record; ARGV[2i]: its lease in ms.
 */
const CLAIM_LUA = `
local out = {}
for i, key in ipairs(KEYS) do
  local current = redis.call('GET', key)
  if current then
    out[i] = current
  else
    redis.call('SET', key, ARGV[2 * i - 1], 'PX', ARGV[2 * i])
    out[i] = '${CLAIMED}'
  end
end
return out
`;

/** Drops the key only while it is this owner's claim: never a completed record, never another's claim. */
const RELEASE_LUA = `
local current = redis.call('GET', KEYS[1])
if current and string.sub(current, 1, #ARGV[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
`;

interface ScriptCommands {
  igwIdempotencyClaim(numberOfKeys: number, ...keysThenArgs: string[]): Promise<string[]>;
  /** The same for one key: a cluster's auto-pipelining finds a command's slot by its first argument. */
  igwIdempotencyClaimOne(key: string, record: string, leaseMs: string): Promise<string[]>;
  igwIdempotencyRelease(key: string, claimPrefix: string): Promise<number>;
}

/**
 * Idempotency keys in Redis, shared by every process. The scripts are registered with
 * ioredis' defineCommand, which sends EVAL the first time on each socket and EVALSHA after,
 * falling back to EVAL on NOSCRIPT: a Redis restart (script cache flushed) heals by itself.
 * The claims of a turn's requests go in one script call (one per 1,000 claims past that:
 * TurnBatch), except on a cluster, where keys hash to different slots.
 *
 * When Redis is unreachable every method rejects within the connection's command timeout
 * (no offline queue); the caller decides (IDEMPOTENCY_ON_STORE_ERROR: accept or refuse).
 */
export class RedisIdempotencyStore implements IdempotencyStore {
  private readonly scripts: ScriptCommands;
  private readonly completions: CompletionWriter;
  private readonly claims: TurnBatch<Claim, string>;

  constructor(
    private readonly client: RedisClient,
    private readonly prefix: string,
  ) {
    client.defineCommand('igwIdempotencyClaim', { lua: CLAIM_LUA });
    client.defineCommand('igwIdempotencyClaimOne', { numberOfKeys: 1, lua: CLAIM_LUA });
    client.defineCommand('igwIdempotencyRelease', { numberOfKeys: 1, lua: RELEASE_LUA });
    this.scripts = client as unknown as ScriptCommands;
    this.claims = new TurnBatch((claims) => this.sendClaims(claims), { gather: !client.isCluster });
    if (!client.isCluster) sendAtOnce(client, ['igwIdempotencyClaim', 'igwIdempotencyClaimOne']);
    this.completions = new CompletionWriter(client, client.isCluster);
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

  async claim(key: string, owner: string, bodyHash: string, leaseMs: number): Promise<ClaimResult> {
    const record: StoredRecord = { state: 'in_flight', owner, bodyHash };
    const claim: Claim = [this.key(key), JSON.stringify(record), ms(leaseMs)];
    const [reply] = await this.claims.add([claim]);
    if (reply === CLAIMED) return { state: 'claimed' };
    const existing = parseRecord(reply);
    const sameBody = existing.bodyHash === bodyHash;
    return existing.state === 'completed'
      ? { state: 'completed', sameBody, response: storedResponse(existing.response) }
      : { state: 'in_flight', sameBody };
  }

  async complete(key: string, owner: string, bodyHash: string, response: CompletedResponse, ttlMs: number): Promise<boolean> {
    const record: StoredRecord = { state: 'completed', owner, bodyHash, response: storedResponse(response) };
    return this.completions.write({
      key: this.key(key),
      args: [recordPrefix('in_flight', owner), recordPrefix('completed', owner), JSON.stringify(record), ms(ttlMs)],
    });
  }

  /** One script call for `claims`, in order (a key claimed twice: the second sees the first's claim). */
  private sendClaims(claims: readonly Claim[]): Promise<string[]> {
    if (claims.length === 1) return this.scripts.igwIdempotencyClaimOne(...claims[0]);
    return this.scripts.igwIdempotencyClaim(claims.length, ...claims.map(([key]) => key), ...claims.flatMap(([, record, lease]) => [record, lease]));
  }

  async release(key: string, owner: string): Promise<void> {
    await this.scripts.igwIdempotencyRelease(this.key(key), recordPrefix('in_flight', owner));
  }

  private key(key: string): string {
    return `${this.prefix}idem:${key}`;
  }
}

/** How a record in each state begins, up to its owner: JSON.stringify's output for the record's first key. */
const STATE_OPENING: Record<StoredRecord['state'], string> = {
  in_flight: '{"state":"in_flight","owner":',
  completed: '{"state":"completed","owner":',
};

/** `{"state":"<state>","owner":"<owner>",`: how every record of this owner in this state begins. */
function recordPrefix(state: StoredRecord['state'], owner: string): string {
  return `${STATE_OPENING[state]}${JSON.stringify(owner)},`;
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
