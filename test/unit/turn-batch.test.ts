import { sendAtOnce, TurnBatch } from '../../src/redis/turn-batch';

describe('TurnBatch', () => {
  it('sends the calls of one turn as one command, each caller getting its own items\' results in order', async () => {
    const sent: Array<readonly number[]> = [];
    const batch = new TurnBatch(async (items: readonly number[]) => {
      sent.push(items);
      return items.map((n) => n * 10);
    });
    const results = await Promise.all([batch.add([1, 2]), batch.add([3]), batch.add([4, 5, 6])]);
    expect(sent).toEqual([[1, 2, 3, 4, 5, 6]]);
    expect(results).toEqual([[10, 20], [30], [40, 50, 60]]);
  });

  it('sends a call made after the flush in the next command', async () => {
    const sent: Array<readonly string[]> = [];
    const batch = new TurnBatch(async (items: readonly string[]) => (sent.push(items), [...items]));
    await batch.add(['a']);
    await Promise.all([batch.add(['b']), batch.add(['c'])]);
    expect(sent).toEqual([['a'], ['b', 'c']]);
  });

  it('gathers until the end of the poll phase (setImmediate), not only within one callback', async () => {
    const sent: Array<readonly string[]> = [];
    const batch = new TurnBatch(async (items: readonly string[]) => (sent.push(items), [...items]));
    // Two I/O-like callbacks of the same turn: the second runs after the first's microtasks.
    const first = batch.add(['first']);
    await Promise.resolve();
    const second = new Promise<string[]>((resolve) => process.nextTick(() => resolve(batch.add(['second']))));
    expect(await Promise.all([first, second])).toEqual([['first'], ['second']]);
    expect(sent).toEqual([['first', 'second']]);
  });

  it('fails every call of a command that rejects, or that throws before it is sent', async () => {
    const rejecting = new TurnBatch(async (): Promise<number[]> => {
      throw new Error('down');
    });
    const throwing = new TurnBatch((): Promise<number[]> => {
      throw new Error('bug');
    });
    const alone = new TurnBatch((): Promise<number[]> => {
      throw new Error('bug');
    }, { gather: false });
    const outcomes = await Promise.allSettled([rejecting.add([1]), rejecting.add([2]), throwing.add([3]), throwing.add([4]), alone.add([5])]);
    expect(outcomes.map((o) => o.status === 'rejected' && (o.reason as Error).message)).toEqual(['down', 'down', 'bug', 'bug', 'bug']);
  });

  it('flushes where it is told: process.nextTick, once the microtasks queued now have run', async () => {
    const sent: Array<readonly number[]> = [];
    const batch = new TurnBatch(async (items: readonly number[]) => (sent.push(items), [...items]), { schedule: process.nextTick });
    const first = batch.add([1]);
    const second = Promise.resolve().then(() => batch.add([2]));
    await Promise.all([first, second]);
    expect(sent).toEqual([[1, 2]]);
  });

  it('sends a turn in commands of at most maxItems items, in order, never splitting a call', async () => {
    const sent: Array<readonly number[]> = [];
    const batch = new TurnBatch(async (items: readonly number[]) => (sent.push(items), items.map((n) => -n)), { maxItems: 3 });
    const results = await Promise.all([batch.add([1, 2]), batch.add([3]), batch.add([4, 5]), batch.add([6, 7, 8, 9]), batch.add([10])]);
    expect(sent).toEqual([[1, 2, 3], [4, 5], [6, 7, 8, 9], [10]]);
    expect(results).toEqual([[-1, -2], [-3], [-4, -5], [-6, -7, -8, -9], [-10]]);
  });

  it('fails only the calls of the command that failed', async () => {
    const batch = new TurnBatch(async (items: readonly number[]) => {
      if (items.includes(3)) throw new Error('down');
      return [...items];
    }, { maxItems: 2 });
    const outcomes = await Promise.allSettled([batch.add([1]), batch.add([2]), batch.add([3]), batch.add([4]), batch.add([5])]);
    expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value : (o.reason as Error).message))).toEqual([[1], [2], 'down', 'down', [5]]);
  });

  it('sends each call alone and at once when told not to gather (a Redis Cluster)', async () => {
    const sent: Array<readonly number[]> = [];
    const batch = new TurnBatch(async (items: readonly number[]) => (sent.push(items), [...items]), { gather: false });
    const first = batch.add([1]);
    expect(sent).toEqual([[1]]);
    expect(await Promise.all([first, batch.add([2, 3])])).toEqual([[1], [2, 3]]);
    expect(sent).toEqual([[1], [2, 3]]);
  });
});

describe('sendAtOnce', () => {
  it('adds a command to the client\'s auto-pipelining exceptions, keeping those already there', () => {
    const client = { options: { autoPipeliningIgnoredCommands: ['info'] } };
    sendAtOnce(client, ['igwBatch']);
    expect(client.options.autoPipeliningIgnoredCommands).toEqual(['info', 'igwBatch']);
    const bare = { options: {} as { autoPipeliningIgnoredCommands?: string[] } };
    sendAtOnce(bare, ['igwBatch', 'igwOther']);
    expect(bare.options.autoPipeliningIgnoredCommands).toEqual(['igwBatch', 'igwOther']);
  });
});
