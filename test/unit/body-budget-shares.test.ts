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
