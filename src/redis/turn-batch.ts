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
}

/**
 * Gathers the calls of one moment and sends them as one command: each caller gets its own
 * items' results. A failed command fails every call in it.
 */
export class TurnBatch<Item, Result> {
  private pending: Array<{ items: readonly Item[]; resolve(results: Result[]): void; reject(error: unknown): void }> = [];
  private readonly schedule: (flush: () => void) => void;
  private readonly gather: boolean;

  constructor(
    private readonly send: (items: readonly Item[]) => Promise<Result[]>,
    { schedule = setImmediate, gather = true }: TurnBatchOptions = {},
  ) {
    this.schedule = schedule;
    this.gather = gather;
  }

  /** The results of `items`, in order, once the batch they joined is answered. */
  add(items: readonly Item[]): Promise<Result[]> {
    if (!this.gather) return this.sendSafely(items);
    return new Promise((resolve, reject) => {
      if (this.pending.push({ items, resolve, reject }) === 1) this.schedule(() => this.flush());
    });
  }

  private flush(): void {
    const calls = this.pending;
    this.pending = [];
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
