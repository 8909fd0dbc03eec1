import { isForbiddenKey, MAX_JSON_DEPTH, parseJsonSafely } from '../../src/body/safe-json';

describe('parseJsonSafely', () => {
  afterEach(() => {
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('parses ordinary JSON like JSON.parse', () => {
    const text = '{"a":[1,{"b":null}],"c":"\\u00e9","d":1.5e2}';
    expect(parseJsonSafely(text)).toEqual(JSON.parse(text));
    expect(parseJsonSafely('[1,2]')).toEqual([1, 2]);
    expect(parseJsonSafely('"s"')).toBe('s');
    expect(parseJsonSafely('null')).toBeNull();
  });

  it('throws on malformed JSON', () => {
    expect(() => parseJsonSafely('{"a":')).toThrow(SyntaxError);
    expect(() => parseJsonSafely('')).toThrow(SyntaxError);
  });

  it('drops __proto__ keys at any depth', () => {
    const value = parseJsonSafely('{"__proto__":{"polluted":1},"a":{"__proto__":{"polluted":2},"b":1},"l":[{"__proto__":{}}]}') as Record<string, any>;
    expect(value).toEqual({ a: { b: 1 }, l: [{}] });
    expect(Object.hasOwn(value, '__proto__')).toBe(false);
    expect(Object.hasOwn(value.a, '__proto__')).toBe(false);
  });

  it('drops constructor.prototype but keeps other constructor values', () => {
    expect(parseJsonSafely('{"constructor":{"prototype":{"polluted":1}},"a":1}')).toEqual({ a: 1 });
    expect(parseJsonSafely('{"constructor":"Foo","prototype":"bar"}')).toEqual({ constructor: 'Foo', prototype: 'bar' });
    expect(parseJsonSafely('{"constructor":{"name":"x"}}')).toEqual({ constructor: { name: 'x' } });
  });

  it('drops keys spelled with \\u escapes', () => {
    const value = parseJsonSafely('{"\\u005f\\u005fproto\\u005f\\u005f":{"polluted":1},"constructor":{"\\u0070rototype":{"polluted":1}},"k":1}');
    expect(value).toEqual({ k: 1 });
    expect(Object.hasOwn(value as object, '__proto__')).toBe(false);
  });

  it('never returns an object with a changed prototype', () => {
    const value = parseJsonSafely('{"__proto__":{"polluted":1}}') as object;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect((value as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('isForbiddenKey', () => {
  it.each(['__proto__', 'constructor', 'prototype'])('%s is forbidden', (name) => expect(isForbiddenKey(name)).toBe(true));
  it.each(['proto', '__proto', 'Constructor', 'prototypes', ''])('%p is allowed', (name) => expect(isForbiddenKey(name)).toBe(false));
});

describe('nesting depth', () => {
  it('refuses JSON nested deeper than MAX_JSON_DEPTH, which could not be serialised again', () => {
    const deep = '['.repeat(MAX_JSON_DEPTH + 1) + ']'.repeat(MAX_JSON_DEPTH + 1);
    expect(() => parseJsonSafely(deep)).toThrow(SyntaxError);
  });

  it('accepts MAX_JSON_DEPTH levels, and brackets inside strings do not count', () => {
    const atLimit = '['.repeat(MAX_JSON_DEPTH) + ']'.repeat(MAX_JSON_DEPTH);
    expect(Array.isArray(parseJsonSafely(atLimit))).toBe(true);
    const text = JSON.stringify({ s: '['.repeat(MAX_JSON_DEPTH * 2) });
    expect(parseJsonSafely(text)).toEqual({ s: '['.repeat(MAX_JSON_DEPTH * 2) });
  });
});
