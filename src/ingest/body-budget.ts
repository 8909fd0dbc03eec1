/**
 * Bytes of request bodies held in memory at once, across all requests of the process. Each
 * body is also parsed, base64'd and serialised, so what it holds is a few times its size:
 * the budget keeps the process's memory bounded however many uploads are in flight.
 *
 * The budget is shared fairly: each request holds its bytes under a few keys (its route, its
 * workspace, its client address), and no key may hold more than `keyCap` bytes while another
 * request of the same key holds any. A request alone on all of its keys may use whatever the
 * budget has left, so one body of any allowed size always fits; many slow bodies of one
 * route, tenant or client cannot take the memory that other tenants' requests need.
 */

/** Why bytes could not be taken: the whole budget is spent, or one of the request's keys holds its share. */
export type Refusal = 'budget' | 'share';
export class BodyBudget {
  private used = 0;
  private readonly byKey = new Map<string, number>();

  constructor(readonly max: number) {}

  get inUse(): number {
    return this.used;
  }

  /** Bytes held under `key` right now (0 when none). */
  heldBy(key: string): number {
    return this.byKey.get(key) ?? 0;
  }

  /** A request's share: take bytes as they are read, release them all when the request is done. */
  lease(keys: string[], keyCap: number): BodyLease {
    return new BodyLease(this, keys, keyCap);
  }

  /** @internal BodyLease's side of the accounting: undefined when taken. */
  tryTake(lease: BodyLease, bytes: number): Refusal | undefined {
    if (this.used + bytes > this.max) return 'budget';
    for (const key of lease.keys) {
      const held = this.heldBy(key);
      const others = held - lease.held;
      if (others > 0 && held + bytes > lease.keyCap) return 'share';
    }
    this.used += bytes;
    for (const key of lease.keys) this.byKey.set(key, this.heldBy(key) + bytes);
    return undefined;
  }

  /** @internal */
  give(lease: BodyLease, bytes: number): void {
    this.used -= bytes;
    for (const key of lease.keys) {
      const left = this.heldBy(key) - bytes;
      if (left > 0) this.byKey.set(key, left);
      else this.byKey.delete(key);
    }
  }
}

export class BodyLease {
  private taken = 0;

  constructor(
    private readonly budget: BodyBudget,
    readonly keys: readonly string[],
    readonly keyCap: number,
  ) {}

  /** Bytes this request holds. */
  get held(): number {
    return this.taken;
  }

  /** Takes `bytes`, or says why not (and takes nothing). */
  take(bytes: number): Refusal | undefined {
    const refusal = this.budget.tryTake(this, bytes);
    if (!refusal) this.taken += bytes;
    return refusal;
  }

  /** Gives every byte back. Safe to call more than once. */
  release(): void {
    if (this.taken === 0) return;
    this.budget.give(this, this.taken);
    this.taken = 0;
  }
}
