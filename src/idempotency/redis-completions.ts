import type { RedisClient } from '../redis/connection';
import { TurnBatch } from '../redis/turn-batch';

/**
 * Writes the completed record when the key is free, holds this owner's claim, or already
 * holds this owner's completion (a retry of a completion whose reply was lost). Another
 * owner's claim or record is left alone: 0.
 * Per key i (from 1): ARGV[4i-3] in-flight prefix of the owner, ARGV[4i-2] completed prefix of
 * the owner, ARGV[4i-1] record, ARGV[4i] ttl ms. Returns 1 or 0 per key.
 */
export const COMPLETE_LUA = `
local written = {}
for i, key in ipairs(KEYS) do
  local at = 4 * (i - 1)
  local current = redis.call('GET', key)
  if current and string.sub(current, 1, #ARGV[at + 1]) ~= ARGV[at + 1] and string.sub(current, 1, #ARGV[at + 2]) ~= ARGV[at + 2] then
    written[i] = 0
  else
    redis.call('SET', key, ARGV[at + 3], 'PX', ARGV[at + 4])
    written[i] = 1
  end
end
return written
`;

/** One completion: the key (with the store's prefix) and its four arguments. */
export interface Completion {
  key: string;
  args: [claimPrefix: string, completedPrefix: string, record: string, ttlMs: string];
}

interface CompleteCommands {
  igwIdempotencyComplete(key: string, ...args: Completion['args']): Promise<number[]>;
  igwIdempotencyCompleteMany(numberOfKeys: number, ...keysThenArgs: string[]): Promise<number[]>;
}

/**
 * The completions of a batch's events in one command: a batch's acknowledgements resume
 * together, so the completions they ask for while their microtasks run are sent as one
 * script call when those are done (TurnBatch on process.nextTick). On a Redis Cluster the keys
 * hash to different slots: one call each (in the same tick, so auto-pipelining still writes
 * them together).
 */
export class CompletionWriter {
  private readonly commands: CompleteCommands;
  private readonly batch: TurnBatch<Completion, boolean>;

  constructor(client: RedisClient, cluster: boolean) {
    client.defineCommand('igwIdempotencyComplete', { numberOfKeys: 1, lua: COMPLETE_LUA });
    client.defineCommand('igwIdempotencyCompleteMany', { lua: COMPLETE_LUA });
    this.commands = client as unknown as CompleteCommands;
    this.batch = new TurnBatch((completions) => this.send(completions), { schedule: process.nextTick, gather: !cluster });
  }

  /** Resolves whether the record was written (false: another owner holds the key). */
  async write(completion: Completion): Promise<boolean> {
    const [written] = await this.batch.add([completion]);
    return written;
  }

  private async send(completions: readonly Completion[]): Promise<boolean[]> {
    const written =
      completions.length === 1
        ? await this.commands.igwIdempotencyComplete(completions[0].key, ...completions[0].args)
        : await this.commands.igwIdempotencyCompleteMany(
            completions.length,
            ...completions.map(({ key }) => key),
            ...completions.flatMap(({ args }) => args),
          );
    return written.map((one) => one === 1);
  }
}
