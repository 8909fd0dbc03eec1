import { Refusal } from '../../src/outcomes/refusal';
import { applyInputFormat, type DeclaredField } from '../../src/ingest/coerce';
import { mint } from '../../src/ingest/file-values';

function coerced(input: Record<string, unknown>, format: DeclaredField[]): Record<string, unknown> {
  applyInputFormat(input, format, MAX_FILE_BYTES);
  return input;
}

function problemsOf(input: Record<string, unknown>, format: DeclaredField[]): unknown {
  try {
    applyInputFormat(input, format, MAX_FILE_BYTES);
  } catch (error) {
    expect(error).toBeInstanceOf(Refusal);
    expect((error as Refusal).code).toBe('BAD_REQUEST');
    return (error as Refusal).details;
  }
  throw new Error('expected applyInputFormat to throw');
}

const MAX_FILE_BYTES = 16;
const file = { type: 'file', name: 'a.txt', mime: 'text/plain', size: 1, data: 'data:text/plain;base64,YQ==' };

describe('applyInputFormat', () => {
  it('does nothing without a format', () => {
    const input = { a: '1' };
    applyInputFormat(input, undefined, MAX_FILE_BYTES);
    expect(input).toEqual({ a: '1' });
  });

  it.each<[string, unknown, unknown]>([
    ['42', '42', 42],
    ['-3.5', '-3.5', -3.5],
    ['1e3', '1e3', 1000],
    [' 7 ', ' 7 ', 7],
    ['a number', 12, 12],
  ])('number: %s → %p', (_name, value, expected) => {
    expect(coerced({ n: value }, [{ name: 'n', type: 'number' }]).n).toBe(expected);
  });

  it.each<unknown>(['abc', '', '   ', 'NaN', 'Infinity', true, null, {}, [1], '12abc'])('number: %p is refused', (value) => {
    expect(problemsOf({ n: value }, [{ name: 'n', type: 'number' }])).toEqual({ fields: [{ field: 'n', expected: 'number' }] });
  });

  it.each<[unknown, boolean]>([
    ['true', true], ['1', true], ['on', true], [true, true], ['TRUE', true], ['True', true],
    ['false', false], ['0', false], ['off', false], [false, false], ['FALSE', false], ['Off', false],
  ])('boolean: %p → %p', (value, expected) => {
    expect(coerced({ b: value }, [{ name: 'b', type: 'boolean' }]).b).toBe(expected);
  });

  it.each<unknown>(['yes', 'TRUE ', '', 2, null])('boolean: %p is refused', (value) => {
    expect(problemsOf({ b: value }, [{ name: 'b', type: 'boolean' }])).toEqual({ fields: [{ field: 'b', expected: 'boolean' }] });
  });

  it('string: numbers and booleans become strings, objects are refused', () => {
    expect(coerced({ s: 5, t: false, u: 'x' }, [
      { name: 's', type: 'string' },
      { name: 't', type: 'string' },
      { name: 'u', type: 'string' },
    ])).toEqual({ s: '5', t: 'false', u: 'x' });
    expect(problemsOf({ s: { a: 1 } }, [{ name: 's', type: 'string' }])).toEqual({ fields: [{ field: 's', expected: 'string' }] });
  });

  it('object and array: JSON text is parsed, the kinds are not confused', () => {
    expect(coerced({ o: '{"a":[1]}', l: '[{"b":2}]' }, [
      { name: 'o', type: 'object' },
      { name: 'l', type: 'array' },
    ])).toEqual({ o: { a: [1] }, l: [{ b: 2 }] });
    expect(coerced({ o: { x: 1 }, l: [] }, [{ name: 'o', type: 'object' }, { name: 'l', type: 'array' }])).toEqual({ o: { x: 1 }, l: [] });
    expect(problemsOf({ o: '[1]', l: '{"a":1}' }, [{ name: 'o', type: 'object' }, { name: 'l', type: 'array' }])).toEqual({
      fields: [{ field: 'o', expected: 'object' }, { field: 'l', expected: 'array' }],
    });
    expect(problemsOf({ o: 'null' }, [{ name: 'o', type: 'object' }])).toEqual({ fields: [{ field: 'o', expected: 'object' }] });
    expect(problemsOf({ o: '{"a":' }, [{ name: 'o', type: 'object' }])).toEqual({ fields: [{ field: 'o', expected: 'object' }] });
  });

  it('object: JSON text with __proto__ does not change any prototype', () => {
    const input = coerced({ o: '{"__proto__":{"polluted":1},"ok":true}' }, [{ name: 'o', type: 'object' }]);
    expect(input.o).toEqual({ ok: true });
    expect(Object.getPrototypeOf(input.o)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('file[]: a file the gateway stored by reference (type url) is a file too', () => {
    const stored = mint({ type: 'url', data: 's3://bucket/ws/p/2026-01-01/e/1-a.pdf', name: 'a.pdf', mime: 'application/pdf', size: 1, sha256: 'ab' });
    expect(coerced({ f: [file, stored] }, [{ name: 'f', type: 'file[]' }]).f).toEqual([file, stored]);
  });

  it('file[]: a single file becomes an array, an array of files stays, anything else is refused', () => {
    expect(coerced({ f: file }, [{ name: 'f', type: 'file[]' }]).f).toEqual([file]);
    expect(coerced({ f: [file, file] }, [{ name: 'f', type: 'file[]' }]).f).toEqual([file, file]);
    expect(problemsOf({ f: 'text' }, [{ name: 'f', type: 'file[]' }])).toEqual({ fields: [{ field: 'f', expected: 'file[]' }] });
    expect(problemsOf({ f: [file, 'text'] }, [{ name: 'f', type: 'file[]' }])).toEqual({ fields: [{ field: 'f', expected: 'file[]' }] });
  });

  it('a missing declared field is no error and is not added', () => {
    expect(coerced({ other: 1 }, [{ name: 'n', type: 'number' }])).toEqual({ other: 1 });
  });

  it('names every bad field in the message and the details', () => {
    let error: Refusal | undefined;
    try {
      applyInputFormat({ a: 'x', b: 'y', c: '1' }, [
        { name: 'a', type: 'number' },
        { name: 'b', type: 'boolean' },
        { name: 'c', type: 'number' },
      ], MAX_FILE_BYTES);
    } catch (e) {
      error = e as Refusal;
    }
    expect(error?.status).toBe(400);
    expect(error?.message).toBe('invalid value for a, b');
    expect(error?.details).toEqual({ fields: [{ field: 'a', expected: 'number' }, { field: 'b', expected: 'boolean' }] });
  });

  it('a declared field named like a prototype key is never assigned through the prototype chain', () => {
    const input: Record<string, unknown> = Object.create(null);
    Object.defineProperty(input, 'constructor', { value: '5', enumerable: true, writable: true, configurable: true });
    applyInputFormat(input, [{ name: 'constructor', type: 'number' }, { name: '__proto__', type: 'object' }], MAX_FILE_BYTES);
    expect(input.constructor).toBe(5);
    expect(Object.getPrototypeOf(input)).toBeNull();
  });
});
