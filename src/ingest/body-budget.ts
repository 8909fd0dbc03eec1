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
 *
 * The cap also shrinks as more keys of a kind hold bytes: with `n` workspaces (or routes, or
 * clients) holding bytes, each may hold at most `max / (n + 1)`, so however many senders fill
 * their shares at once, room is left for a key that holds nothing yet (two senders at 50 %
 * each would otherwise take it all, and a third tenant's small request would get 503). And a
 * request that shares a key with another may not take the last `headroom` bytes (an eighth
 * of the budget): those are kept for requests whose keys hold nothing yet.
 */

/** Why bytes could not be taken: the whole budget is spent, or one of the request's keys holds its share. */
export type Refusal = 'budget' | 'share';
export class BodyBudget {
  private used = 0;
  private readonly byKey = new Map<string, number>();
  /** How many keys of each kind (`route`, `client`, `workspace`) hold bytes. */
  private readonly activeByKind = new Map<string, number>();
  /** Leases waiting for room (takeWhenFree): each tries again whenever bytes come back; true once taken. */
  private readonly waiters = new Set<() => boolean>();

  /** Bytes only a request alone on all of its keys may take. */
  readonly headroom: number;

  constructor(readonly max: number) {
    this.headroom = Math.floor(max / 8);
  }

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
    let shared = false;
    for (const key of lease.keys) {
      const held = this.heldBy(key);
      const others = held - lease.held;
      if (others <= 0) continue;
      shared = true;
      if (held + bytes > this.capOf(key, lease.keyCap)) return 'share';
    }
    if (shared && this.used + bytes > this.max - this.headroom) return 'share';
    this.used += bytes;
    for (const key of lease.keys) {
      const held = this.heldBy(key);
      if (held === 0) this.countActive(key, 1);
      this.byKey.set(key, held + bytes);
    }
    return undefined;
  }

  /** The most `key` (which holds bytes) may hold: its share, and no more than leaves room for one more key of its kind. */
  capOf(key: string, keyCap: number): number {
    const active = this.activeByKind.get(kindOf(key)) ?? 1;
    return Math.min(keyCap, Math.floor(this.max / (active + 1)));
  }

  private countActive(key: string, change: 1 | -1): void {
    const kind = kindOf(key);
    const count = (this.activeByKind.get(kind) ?? 0) + change;
    if (count > 0) this.activeByKind.set(kind, count);
    else this.activeByKind.delete(kind);
  }

  /** @internal */
  give(lease: BodyLease, bytes: number): void {
    this.used -= bytes;
    for (const key of lease.keys) {
      const left = this.heldBy(key) - bytes;
      if (left > 0) this.byKey.set(key, left);
      else if (this.byKey.delete(key)) this.countActive(key, -1);
    }
    for (const retry of this.waiters) if (retry()) this.waiters.delete(retry);
  }

  /** @internal */
  wait(retry: () => boolean): void {
    this.waiters.add(retry);
  }

  /** @internal */
  stopWaiting(retry: () => boolean): void {
    this.waiters.delete(retry);
  }
}

/** `workspace:ws-1` → `workspace`. */
function kindOf(key: string): string {
  const colon = key.indexOf(':');
  return colon < 0 ? key : key.slice(0, colon);
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

  /**
   * Takes `bytes` once there is room, waiting while the budget or a share is full: for memory
   * that comes back by itself soon (a streamed upload's part buffer, given back once the part
   * is sent), so a sender's concurrent uploads queue for memory instead of being refused.
   * Resolves undefined once taken; the last refusal when `signal` aborts first, or at once when
   * the bytes could never fit.
   */
  takeWhenFree(bytes: number, signal: AbortSignal): Promise<Refusal | undefined> {
    const refusal = this.take(bytes);
    if (!refusal || bytes > this.budget.max || signal.aborted) return Promise.resolve(refusal);
    return new Promise((resolve) => {
      let last: Refusal = refusal;
      const retry = () => {
        const again = this.take(bytes);
        if (again) {
          last = again;
          return false;
        }
        signal.removeEventListener('abort', onAbort);
        resolve(undefined);
        return true;
      };
      const onAbort = () => {
        this.budget.stopWaiting(retry);
        resolve(last);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.budget.wait(retry);
    });
  }

  /** Gives `bytes` of what this request holds back (a part buffer that was sent). */
  giveBack(bytes: number): void {
    const back = Math.min(bytes, this.taken);
    if (back <= 0) return;
    this.taken -= back;
    this.budget.give(this, back);
  }

  /** Gives every byte back. Safe to call more than once. */
  release(): void {
    if (this.taken === 0) return;
    this.budget.give(this, this.taken);
    this.taken = 0;
  }
}
