export interface TurnBatchOptions {
  /**
   * When the gathered calls go:
   * - `setImmediate` (the default): at the end of the event loop's poll phase, where ioredis's
   *   auto-pipelining writes too, so every request whose data arrived in that turn is in the
   *   same command (one Command, one EVALSHA, one script run in Redis instead of one each);
   * - `process.nextTick`: once the microtasks queued now have run (a Kafka batch's callers,
   *   who resume together).
   */
  schedule?: (flush: () => void) => void;
  /** False: each call is sent alone, at once (a Redis Cluster: keys of other slots share no script). */
  gather?: boolean;
  /** Most items in one command (MAX_ITEMS_PER_COMMAND by default); a turn with more sends several. */
  maxItems?: number;
}

/**
 * A turn's items go in commands of at most this many. The senders spread a command's arguments
 * into one call, and V8 overflows its stack past about 100,000 of them: a turn of some 20,000
 * pipelined requests (3 counters each, 3 arguments a counter) failed every one of its calls, and
 * the rate limits and failed-authentication counts failed open. One script of 1,000 items also
 * holds Redis for about a millisecond, not for as long as a flood's turn.
 */
export const MAX_ITEMS_PER_COMMAND = 1000;

/** One caller's items, waiting for the command they go in. */
interface PendingCall<Item, Result> {
  items: readonly Item[];
  resolve(results: Result[]): void;
  reject(error: unknown): void;
}

/**
 * Gathers the calls of one moment and sends them as one command (one per MAX_ITEMS_PER_COMMAND
 * items past that): each caller gets its own items' results. A failed command fails every call
 * in it.
 */
export class TurnBatch<Item, Result> {
  private pending: Array<PendingCall<Item, Result>> = [];
  private readonly schedule: (flush: () => void) => void;
  private readonly gather: boolean;
  private readonly maxItems: number;

  constructor(
    private readonly send: (items: readonly Item[]) => Promise<Result[]>,
    { schedule = setImmediate, gather = true, maxItems = MAX_ITEMS_PER_COMMAND }: TurnBatchOptions = {},
  ) {
    this.schedule = schedule;
    this.gather = gather;
    this.maxItems = maxItems;
  }

  /** The results of `items`, in order, once the batch they joined is answered. */
  add(items: readonly Item[]): Promise<Result[]> {
    if (!this.gather) return this.sendSafely(items);
    return new Promise((resolve, reject) => {
      if (this.pending.push({ items, resolve, reject }) === 1) this.schedule(() => this.flush());
    });
  }

  /** The turn's calls in commands of at most `maxItems` items, in order; a call's items never split. */
  private flush(): void {
    const pending = this.pending;
    this.pending = [];
    let start = 0;
    while (start < pending.length) {
      let end = start + 1;
      let items = pending[start].items.length;
      while (end < pending.length && items + pending[end].items.length <= this.maxItems) items += pending[end++].items.length;
      this.sendCalls(pending.slice(start, end));
      start = end;
    }
  }

  private sendCalls(calls: ReadonlyArray<PendingCall<Item, Result>>): void {
    this.sendSafely(calls.flatMap((call) => call.items)).then(
      (results) => {
        let at = 0;
        for (const call of calls) {
          call.resolve(results.slice(at, at + call.items.length));
          at += call.items.length;
        }
      },
      (error: unknown) => calls.forEach((call) => call.reject(error)),
    );
  }

  /** A `send` that throws before its command exists fails like one Redis refused. */
  private sendSafely(items: readonly Item[]): Promise<Result[]> {
    try {
      return this.send(items);
    } catch (error) {
      return Promise.reject(error);
    }
  }
}

/**
 * Lets a batch's script command skip ioredis's auto-pipelining: a batch is flushed where the
 * auto-pipeline is written (after the poll phase), and a command queued there would wait for
 * the next turn's; sent at once, it goes out in that same turn.
 */
export function sendAtOnce(client: { options: object }, commandNames: readonly string[]): void {
  const options = client.options as { autoPipeliningIgnoredCommands?: string[] };
  options.autoPipeliningIgnoredCommands = [...(options.autoPipeliningIgnoredCommands ?? []), ...commandNames];
}
