import type { RedisClient } from '../redis/connection';
import { sendAtOnce, TurnBatch } from '../redis/turn-batch';
import type { Counted, CounterOp, RateCounters } from './counters';

/**
 * Every counter of a request in one script call: rate-limit-redis' own increment (PTTL, then
 * SET 1 PX window when the window is over, INCR otherwise) and get (GET, PTTL) on the same
 * keys and values, so pods running either share their counters.
 * KEYS[i]: a counter; ARGV[2i-1]: its window in ms; ARGV[2i]: '1' to count a hit, '0' to read.
 * Returns hits and ms until the window ends, two numbers per key (a read absent one: 0, -2).
 */
const COUNT_LUA = `
local out = {}
for i, key in ipairs(KEYS) do
  local ttl = redis.call('PTTL', key)
  local hits
  if ARGV[2 * i] == '1' then
    if ttl <= 0 then
      ttl = tonumber(ARGV[2 * i - 1])
      redis.call('SET', key, 1, 'PX', ttl)
      hits = 1
    else
      hits = redis.call('INCR', key)
    end
  else
    hits = tonumber(redis.call('GET', key) or '0') or 0
  end
  out[2 * i - 1] = hits
  out[2 * i] = ttl
end
return out
`;

interface CountCommands {
  igwRateCount(numberOfKeys: number, ...keysThenArgs: string[]): Promise<number[]>;
  /** The same for one key: a cluster's auto-pipelining finds a command's slot by its first argument. */
  igwRateCountOne(key: string, windowMs: string, hit: string): Promise<number[]>;
}

/** One counter after its op: hits, and ms until its window ends (a read absent one: 0, -2). */
type CounterReply = [hits: number, ttlMs: number];

/**
 * The rate limits' and failed authentications' counters in Redis. Every request of a turn
 * (TurnBatch) goes in one script call (one per 1,000 counters past that): one command instead of
 * one per request, in the gateway and in Redis. On a Redis Cluster the counters hash to different slots, so each goes alone;
 * issued in the same tick, auto-pipelining still sends them in one write per node.
 * defineCommand sends EVALSHA, and EVAL after a NOSCRIPT (a restarted Redis heals by itself).
 * Never rejects: a counter Redis did not answer for is a rejected result, and the callers fail open.
 */
export class RedisCounters implements RateCounters {
  private readonly commands: CountCommands;
  private readonly batch: TurnBatch<CounterOp, CounterReply>;

  constructor(
    client: RedisClient,
    private readonly prefix: string,
    private readonly cluster: boolean,
  ) {
    client.defineCommand('igwRateCount', { lua: COUNT_LUA });
    client.defineCommand('igwRateCountOne', { lua: COUNT_LUA, numberOfKeys: 1 });
    this.commands = client as unknown as CountCommands;
    this.batch = new TurnBatch((ops) => this.send(ops), { gather: !cluster });
    if (!cluster) sendAtOnce(client, ['igwRateCount', 'igwRateCountOne']);
  }

  /**
   * Each op's counter after it, in order. Fails per op (only a cluster's ops can fail apart):
   * the caller lets the request through as far as a failed counter goes.
   */
  async count(ops: readonly CounterOp[]): Promise<Array<PromiseSettledResult<Counted>>> {
    if (this.cluster && ops.length > 1) return (await Promise.all(ops.map((op) => this.count([op])))).flat();
    let replies: CounterReply[];
    try {
      replies = await this.batch.add(ops);
    } catch (reason) {
      return ops.map(() => ({ status: 'rejected', reason }));
    }
    const now = Date.now();
    return replies.map(([totalHits, ttl]) => {
      const value = ttl === -2 && totalHits === 0 ? undefined : { totalHits, resetTime: new Date(now + ttl) };
      return { status: 'fulfilled', value };
    });
  }

  /** One script call for `ops`, in order (the same counter twice counts twice, as two calls would). */
  private async send(ops: readonly CounterOp[]): Promise<CounterReply[]> {
    const args: string[] = [];
    for (const op of ops) args.push(this.prefix + op.key);
    for (const op of ops) args.push(String(op.windowMs), op.hit ? '1' : '0');
    const reply = await (ops.length === 1 ? this.commands.igwRateCountOne(args[0], args[1], args[2]) : this.commands.igwRateCount(ops.length, ...args));
    return ops.map((_, i) => [Number(reply[2 * i]), Number(reply[2 * i + 1])]);
  }
}
