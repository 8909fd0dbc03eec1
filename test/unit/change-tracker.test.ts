import { ChangeTracker } from '../../src/registry/change-tracker';

describe('ChangeTracker: when the registry cache is known to miss no change', () => {
  it('the first poll sets where counting starts and expires what was cached before it', () => {
    const tracker = new ChangeTracker();
    tracker.apply(7); // a message that came before any poll
    expect(tracker.confirmedAt).toBe(Number.NEGATIVE_INFINITY);
    expect(tracker.polled(5, 1000)).toBe('reset');
    expect(tracker.confirmedAt).toBe(1000);
    // 6 is missing (7 came early): not confirmed until it comes.
    expect(tracker.polled(7, 1100)).toBe('ok');
    expect(tracker.confirmedAt).toBe(1000);
    tracker.apply(6);
    expect(tracker.confirmedAt).toBe(1100);
  });

  it('a poll that finds every change applied confirms the cache as of when it was sent', () => {
    const tracker = new ChangeTracker();
    tracker.polled(0, 1000);
    tracker.apply(1);
    tracker.apply(2);
    expect(tracker.polled(2, 1200)).toBe('ok');
    expect(tracker.confirmedAt).toBe(1200);
    expect(tracker.polled(2, 1400)).toBe('ok');
    expect(tracker.confirmedAt).toBe(1400);
  });

  it('messages still on their way when the poll answers confirm it once they arrive, in any order', () => {
    const tracker = new ChangeTracker();
    tracker.polled(10, 1000);
    expect(tracker.polled(13, 1200)).toBe('ok');
    expect(tracker.confirmedAt).toBe(1000);
    tracker.apply(13);
    tracker.apply(11);
    expect(tracker.confirmedAt).toBe(1000);
    tracker.apply(12);
    expect(tracker.confirmedAt).toBe(1200);
  });

  it('a change still missing at the next poll was lost: reset, and the cache is confirmed as of that poll', () => {
    const tracker = new ChangeTracker();
    tracker.polled(0, 1000);
    expect(tracker.polled(1, 1200)).toBe('ok');
    expect(tracker.polled(1, 1400)).toBe('reset');
    expect(tracker.confirmedAt).toBe(1400);
    // Counting goes on from there: the late message changes nothing, the next change is awaited.
    tracker.apply(1);
    expect(tracker.polled(1, 1600)).toBe('ok');
    expect(tracker.confirmedAt).toBe(1600);
  });

  it('changes that keep coming are not taken as lost while each arrives before the next poll', () => {
    const tracker = new ChangeTracker();
    tracker.polled(0, 1000);
    let version = 0;
    for (let poll = 1; poll <= 10; poll += 1) {
      version += 3;
      // A poll sees three new changes before their messages arrive…
      expect(tracker.polled(version, 1000 + poll * 200)).toBe('ok');
      // …which arrive before the next poll.
      for (let v = version - 2; v <= version; v += 1) tracker.apply(v);
      expect(tracker.confirmedAt).toBe(1000 + poll * 200);
    }
  });

  it('a counter that went back (Redis lost its data) resets, forgetting versions of the old count', () => {
    const tracker = new ChangeTracker();
    tracker.polled(100, 1000);
    tracker.apply(102); // 101 never came
    expect(tracker.polled(3, 1200)).toBe('reset');
    expect(tracker.confirmedAt).toBe(1200);
    // 102 belonged to the old count: once the new count reaches 101, 102 is still awaited.
    for (let v = 4; v <= 101; v += 1) tracker.apply(v);
    expect(tracker.polled(102, 1400)).toBe('ok');
    expect(tracker.confirmedAt).toBe(1200);
    tracker.apply(102);
    expect(tracker.confirmedAt).toBe(1400);
  });

  it("this process's own changes count as applied", () => {
    const tracker = new ChangeTracker();
    tracker.polled(0, 1000);
    tracker.apply(1); // the version the write script returned
    expect(tracker.polled(1, 1200)).toBe('ok');
    expect(tracker.confirmedAt).toBe(1200);
  });
});
