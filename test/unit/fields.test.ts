import { FieldCollector } from '../../src/ingest/fields';

function collect(pairs: Array<[string, unknown]>): Record<string, unknown> {
  const fields = new FieldCollector();
  for (const [name, value] of pairs) fields.add(name, value);
  return fields.result();
}

describe('FieldCollector', () => {
  it('keeps a single value as is', () => {
    expect(collect([['a', '1'], ['b', '2']])).toEqual({ a: '1', b: '2' });
  });

  it('collects x[] into an array, even a single one', () => {
    expect(collect([['x[]', '1']])).toEqual({ x: ['1'] });
    expect(collect([['x[]', '1'], ['x[]', '2']])).toEqual({ x: ['1', '2'] });
  });

  it('collects a repeated x, and mixes x and x[] in order', () => {
    expect(collect([['x', '1'], ['x', '2'], ['x', '3']])).toEqual({ x: ['1', '2', '3'] });
    expect(collect([['x', '1'], ['x[]', '2']])).toEqual({ x: ['1', '2'] });
    expect(collect([['x[]', '1'], ['x', '2']])).toEqual({ x: ['1', '2'] });
  });

  it('keeps arrays as values without flattening', () => {
    expect(collect([['x', ['a']], ['x', ['b']]])).toEqual({ x: [['a'], ['b']] });
  });

  it('drops empty names and prototype keys', () => {
    const result = collect([['', '1'], ['[]', '2'], ['__proto__', { polluted: 1 }], ['__proto__[]', 'x'], ['constructor', 'c'], ['prototype[]', 'p'], ['ok', 'y']]);
    expect(result).toEqual({ ok: 'y' });
    expect(Object.hasOwn(result, '__proto__')).toBe(false);
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('strips only one trailing []', () => {
    expect(collect([['x[][]', '1']])).toEqual({ 'x[]': ['1'] });
  });
});
