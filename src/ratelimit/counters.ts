/** One fixed-window counter of a request: counted one more time (`hit`), or only read. */
export interface CounterOp {
  /** Under the store's prefix, e.g. `rl:trigger:60:<path>` or `af:60:<target>|<client>`. */
  key: string;
  windowMs: number;
  hit: boolean;
}

/** A counter as it stands after the op; undefined for a counter only read that does not exist. */
export type Counted = { totalHits: number; resetTime: Date } | undefined;

/** Where a request's counters live: each op's counter after it, in order; a counter that failed is a rejected result. */
export interface RateCounters {
  count(ops: readonly CounterOp[]): Promise<Array<PromiseSettledResult<Counted>>>;
}
