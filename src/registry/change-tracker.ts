/**
 * Which registry changes this process has applied to its cache, and since when the cache is
 * known to miss none of them.
 *
 * Every change (put or delete) increments one version counter in Redis and publishes its
 * version with the change message, in the same script. This process applies each message it
 * receives (drops the entry) and polls the counter every few hundred ms. When the counter it
 * reads at time `s` is a version whose changes it has all applied, nothing committed before `s`
 * was missed: every cached entry is as good as one read at `s` (`confirmedAt`). When a version
 * stays missing from one poll to the next, its message was lost: the caller expires the whole
 * cache ('reset').
 *
 * So an entry needs no read of its own to stay fresh, whatever the size of the registry: one
 * GET per process per poll keeps every entry confirmed, and a lost message costs one re-read of
 * what is used, within two polls.
 */
export class ChangeTracker {
  /** Every version up to this one is applied; undefined until the first poll. */
  private applied?: number;
  /** Versions received beyond `applied` (out of order, or while the one before is missing). */
  private readonly ahead = new Set<number>();
  /** A poll whose version was not all applied yet when its answer came. */
  private waiting?: { version: number; sentAt: number };
  /** When the last poll that found every change applied was sent. */
  confirmedAt = Number.NEGATIVE_INFINITY;

  /** A change of this version is in force here (its message arrived, or it was this process's own). */
  apply(version: number): void {
    if (this.applied !== undefined && version <= this.applied) return;
    this.ahead.add(version);
    this.advance();
  }

  /**
   * The counter was `version` when a poll sent at `sentAt` read it. 'reset': changes were lost
   * (or the counter went back: Redis lost its data); expire every cached entry now.
   */
  polled(version: number, sentAt: number): 'ok' | 'reset' {
    if (this.applied === undefined || version < this.applied) return this.reset(version, sentAt);
    if (version <= this.applied) {
      this.waiting = undefined;
      this.confirmedAt = Math.max(this.confirmedAt, sentAt);
      return 'ok';
    }
    // Still missing what the previous poll already saw: its messages are not coming.
    if (this.waiting && this.applied < this.waiting.version) return this.reset(version, sentAt);
    // The messages may still be on their way (they travel on another connection).
    this.waiting = { version, sentAt };
    return 'ok';
  }

  private reset(version: number, sentAt: number): 'reset' {
    // A counter that went back starts over: versions seen before are of another history.
    if (this.applied !== undefined && version < this.applied) this.ahead.clear();
    this.applied = version;
    for (const seen of this.ahead) if (seen <= version) this.ahead.delete(seen);
    this.waiting = undefined;
    this.advance();
    // The caller expires every entry before anything reads the cache again: what is cached
    // from now on is read after `sentAt`.
    this.confirmedAt = Math.max(this.confirmedAt, sentAt);
    return 'reset';
  }

  private advance(): void {
    if (this.applied === undefined) return;
    while (this.ahead.delete(this.applied + 1)) this.applied += 1;
    if (this.waiting && this.applied >= this.waiting.version) {
      this.confirmedAt = Math.max(this.confirmedAt, this.waiting.sentAt);
      this.waiting = undefined;
    }
  }
}
