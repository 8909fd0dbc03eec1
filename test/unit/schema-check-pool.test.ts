import { Worker } from 'node:worker_threads';
import { CheckPool } from '../../src/json-schema/check-pool';
import { isMultipleOf } from '../../src/json-schema/decimal';
import { refFanOut } from '../helpers/hostile-schemas';

/** Contract §13.1: a schema worker over its time or heap budget ends; the process and the pool go on. */
describe('CheckPool', () => {
  const pools: CheckPool[] = [];
  const pool = (limits: Partial<CheckPool['limits']>, spawn?: ConstructorParameters<typeof CheckPool>[1]) => {
    const made = new CheckPool({ workers: 1, compileMs: 2000, checkMs: 2000, queueMs: 10_000, heapMb: 64, ...limits }, spawn);
    pools.push(made);
    return made;
  };
  afterAll(() => Promise.all(pools.map((p) => p.close())));

  /** Ajv needs seconds to compile it (the pool itself does not apply the static bound of PUT). */
  const SLOW = refFanOut(100);

  it('ends a compile over its budget and answers over-budget; the next job gets a new worker', async () => {
    const p = pool({ compileMs: 300 }); // SLOW takes 3-5 s, { type: "string" } a few ms
    expect(await p.run({ op: 'compile', hash: 'slow', schema: SLOW })).toEqual({ kind: 'over-budget', problem: 'took longer than 300 ms' });
    expect(await p.run({ op: 'compile', hash: 'small', schema: { type: 'string' } })).toEqual({ kind: 'done', errors: [] });
  });

  it('survives a worker that runs out of heap: the check is over budget, the process and the pool go on', async () => {
    const p = pool({ heapMb: 16, checkMs: 120_000 }); // only the heap can end it
    const schema = { type: 'array', items: { type: 'object' } };
    const huge = `[${Array(400_000).fill('{"a":[1,2,3]}').join(',')}]`;
    expect(await p.run({ op: 'check', hash: 'objects', schema, input: huge })).toEqual({
      kind: 'over-budget',
      problem: 'needed more than the 16 MB heap its worker has',
    });
    expect(await p.run({ op: 'check', hash: 'objects', schema, input: '[{}, 1]' })).toEqual({
      kind: 'done',
      errors: [{ instancePath: '/1', keyword: 'type', message: 'must be object' }],
    });
  });

  it('answers a job that waited longer than queueMs busy', async () => {
    const p = pool({ queueMs: 200, compileMs: 60_000, heapMb: 256 });
    await p.run({ op: 'compile', hash: 'small', schema: { type: 'string' } }); // the worker is ready after it, whatever it answered
    const slow = p.run({ op: 'compile', hash: 'slow', schema: SLOW });
    const queued = p.run({ op: 'compile', hash: 'other', schema: { type: 'number' } });
    expect(await queued).toEqual({ kind: 'busy' });
    expect((await slow).kind).toBe('done');
  });

  it('answers busy, not over-budget, when its worker cannot start (the gateway fails, not the input)', async () => {
    const p = pool({}, () => new Worker('throw new Error("cannot load")', { eval: true })); // dies before it is ready
    expect(await p.run({ op: 'check', hash: 'any', schema: { type: 'string' }, input: '"x"' })).toEqual({ kind: 'busy' });
  });

  it('refuses a heap too small for V8 to start a worker in (that would abort the process, not the worker)', () => {
    expect(() => pool({ heapMb: 1 })).toThrow('a schema worker needs at least 16 MB of heap');
  });

  it("runs one owner's jobs on all workers but one: another owner's job is not queued behind them", async () => {
    const p = pool({ workers: 2, compileMs: 60_000, heapMb: 256 });
    const order: string[] = [];
    const run = (name: string, owner: string, schema: Record<string, unknown>) =>
      p.run({ op: 'compile', hash: name, schema, owner }).then((outcome) => {
        order.push(name);
        return outcome;
      });
    // Both of a's compiles take seconds; b's takes milliseconds and was queued last.
    const outcomes = await Promise.all([run('a1', 'a', SLOW), run('a2', 'a', refFanOut(99)), run('b', 'b', { type: 'string' })]);
    expect(outcomes.map((outcome) => outcome.kind)).toEqual(['done', 'done', 'done']);
    expect(order[0]).toBe('b');
    expect(order.slice(1).sort()).toEqual(['a1', 'a2']);
  }, 60_000);

  it('collects up to 20 errors for a small input, the first only for a large one', async () => {
    const p = pool({});
    const schema = { type: 'array', items: { type: 'string' } };
    const small = await p.run({ op: 'check', hash: 'strings', schema, input: JSON.stringify(Array(30).fill(0)) });
    expect(small.kind === 'done' && small.errors).toHaveLength(20);
    const large = await p.run({ op: 'check', hash: 'strings', schema, input: JSON.stringify(Array(300_000).fill(0)) });
    expect(large).toEqual({ kind: 'done', errors: [{ instancePath: '/0', keyword: 'type', message: 'must be string' }] });
  });
});

describe('isMultipleOf (decimal, contract §13.1)', () => {
  it('reads numbers as the decimals they print as', () => {
    expect(isMultipleOf(1.13, 0.01)).toBe(true);
    expect(isMultipleOf(0.29, 0.01)).toBe(true);
    expect(isMultipleOf(-4.35, 0.05)).toBe(true);
    expect(isMultipleOf(1e21, 0.01)).toBe(true);
    expect(isMultipleOf(3e-7, 1e-7)).toBe(true);
    expect(isMultipleOf(0, 0.3)).toBe(true);
    expect(isMultipleOf(10, 2.5)).toBe(true);
    expect(isMultipleOf(0.001, 0.01)).toBe(false);
    expect(isMultipleOf(1.0000000001, 0.01)).toBe(false);
    expect(isMultipleOf(7, 2)).toBe(false);
    expect(isMultipleOf(2.5e-7, 1e-7)).toBe(false);
  });
});
