import { BodyBudget } from '../../src/ingest/body-budget';

describe('BodyBudget shares (issue 9, item 1)', () => {
  it('lets a request alone on its keys use what the budget has, even past its key cap', () => {
    const budget = new BodyBudget(1000);
    const lease = budget.lease(['route:a', 'client:x'], 100);
    expect(lease.take(600)).toBeUndefined();
    expect(lease.take(400)).toBeUndefined();
    expect(lease.take(1)).toBe('budget'); // the process-wide limit still holds
    expect(budget.inUse).toBe(1000);
  });

  it('refuses a second request of a key that would pass the cap, but not a request of other keys', () => {
    const budget = new BodyBudget(1000);
    const first = budget.lease(['route:a', 'client:x'], 250);
    expect(first.take(200)).toBeUndefined();
    const sameRoute = budget.lease(['route:a', 'client:y'], 250);
    expect(sameRoute.take(50)).toBeUndefined();
    expect(sameRoute.take(1)).toBe('share');
    const sameClient = budget.lease(['route:b', 'client:x'], 250);
    expect(sameClient.take(51)).toBe('share');
    const other = budget.lease(['route:b', 'client:y2'], 250);
    expect(other.take(500)).toBeUndefined();
    expect(budget.inUse).toBe(750);
  });

  it('gives every byte back on release, once, and forgets empty keys', () => {
    const budget = new BodyBudget(1000);
    const a = budget.lease(['route:a'], 100);
    const b = budget.lease(['route:a'], 100);
    expect(a.take(300)).toBeUndefined();
    expect(b.take(1)).toBe('share');
    a.release();
    a.release();
    expect(budget.inUse).toBe(0);
    expect(budget.heldBy('route:a')).toBe(0);
    expect(b.take(300)).toBeUndefined();
    expect(budget.heldBy('route:a')).toBe(300);
  });
});

describe('BodyBudget headroom for keys that hold nothing (issue 20, item 8)', () => {
  const senderKeys = (name: string) => [`route:trigger:${name}`, `client:${name}`, `workspace:ws-${name}`];

  /** Requests of `bytes` each from one sender until the budget refuses one; the leases taken. */
  function fill(budget: BodyBudget, name: string, bytes: number): number {
    let taken = 0;
    while (budget.lease(senderKeys(name), 500).take(bytes) === undefined) taken += bytes;
    return taken;
  }

  it('two senders filling their 50 % shares one after the other leave room for a third tenant', () => {
    const budget = new BodyBudget(1000);
    fill(budget, 'a', 10);
    fill(budget, 'b', 10);
    expect(budget.inUse).toBeLessThanOrEqual(1000 - budget.headroom);
    expect(budget.lease(senderKeys('c'), 500).take(100)).toBeUndefined();
  });

  it('two senders filling at the same time each get at most max / 3 once both hold bytes', () => {
    const budget = new BodyBudget(1000);
    const keep = [budget.lease(senderKeys('a'), 500), budget.lease(senderKeys('b'), 500)];
    for (const lease of keep) expect(lease.take(10)).toBeUndefined();
    let refused = 0;
    while (refused < 2) {
      refused = 0;
      for (const name of ['a', 'b']) if (budget.lease(senderKeys(name), 500).take(10) !== undefined) refused++;
    }
    expect(budget.heldBy('workspace:ws-a')).toBeLessThanOrEqual(333);
    expect(budget.heldBy('workspace:ws-b')).toBeLessThanOrEqual(333);
    expect(budget.lease(senderKeys('c'), 500).take(300)).toBeUndefined();
  });

  it('a request alone on its keys may still use the headroom; one that shares a key may not', () => {
    const budget = new BodyBudget(1000);
    expect(budget.lease(senderKeys('a'), 1000).take(850)).toBeUndefined();
    expect(budget.lease(senderKeys('a'), 1000).take(50)).toBe('share');
    expect(budget.lease(senderKeys('b'), 1000).take(150)).toBeUndefined();
  });
});

describe('BodyLease.takeWhenFree: part buffers wait for room instead of being refused (issue 22, item 2)', () => {
  it('waits while a share is full and takes the bytes once another request gives some back', async () => {
    const budget = new BodyBudget(1000);
    const first = budget.lease(['client:x'], 500);
    expect(first.take(400)).toBeUndefined();
    const second = budget.lease(['client:x'], 500);
    let taken: string | undefined = 'waiting';
    const waiting = second.takeWhenFree(300, new AbortController().signal).then((refusal) => (taken = refusal));
    await Promise.resolve();
    expect(taken).toBe('waiting');
    first.giveBack(300);
    await waiting;
    expect(taken).toBeUndefined();
    expect(second.held).toBe(300);
    expect(budget.inUse).toBe(400);
  });

  it('gives up with the refusal when its signal aborts, and takes nothing afterwards', async () => {
    const budget = new BodyBudget(1000);
    const holder = budget.lease(['client:x'], 500);
    expect(holder.take(500)).toBeUndefined();
    const controller = new AbortController();
    const waiter = budget.lease(['client:x'], 500);
    const result = waiter.takeWhenFree(100, controller.signal);
    controller.abort();
    expect(await result).toBe('share');
    holder.release();
    expect(waiter.held).toBe(0);
    expect(budget.inUse).toBe(0);
  });

  it('refuses at once what could never fit', async () => {
    const budget = new BodyBudget(1000);
    expect(await budget.lease(['client:x'], 500).takeWhenFree(1001, new AbortController().signal)).toBe('budget');
  });
});
