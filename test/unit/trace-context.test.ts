import {
  formatTraceparent,
  incomingTrace,
  newSpanId,
  newTraceId,
  parseTraceparent,
  parseTracestate,
  passThroughTrace,
} from '../../src/tracing/w3c';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN_ID = '00f067aa0ba902b7';
const VALID = `00-${TRACE_ID}-${SPAN_ID}-01`;

describe('traceparent (W3C Trace Context §3.2)', () => {
  it('reads a version 00 header', () => {
    expect(parseTraceparent(VALID)).toEqual({ traceId: TRACE_ID, spanId: SPAN_ID, flags: 1 });
    expect(parseTraceparent(`00-${TRACE_ID}-${SPAN_ID}-00`)).toEqual({ traceId: TRACE_ID, spanId: SPAN_ID, flags: 0 });
  });

  it('reads a later version by its first four fields, and keeps only the flags it knows', () => {
    expect(parseTraceparent(`cc-${TRACE_ID}-${SPAN_ID}-09-what-the-future-holds`)).toEqual({ traceId: TRACE_ID, spanId: SPAN_ID, flags: 1 });
    expect(parseTraceparent(`01-${TRACE_ID}-${SPAN_ID}-03`)).toEqual({ traceId: TRACE_ID, spanId: SPAN_ID, flags: 3 });
  });

  it.each([
    ['absent', undefined],
    ['empty', ''],
    ['version ff', `ff-${TRACE_ID}-${SPAN_ID}-01`],
    ['version 00 with more fields', `00-${TRACE_ID}-${SPAN_ID}-01-extra`],
    ['a later version glued to more text', `cc-${TRACE_ID}-${SPAN_ID}-01x`],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${SPAN_ID}-01`],
    ['an all-zero parent id', `00-${TRACE_ID}-${'0'.repeat(16)}-01`],
    ['upper-case hex', `00-${TRACE_ID.toUpperCase()}-${SPAN_ID}-01`],
    ['a short trace id', `00-${TRACE_ID.slice(1)}-${SPAN_ID}-01`],
    ['a short parent id', `00-${TRACE_ID}-${SPAN_ID.slice(1)}-01`],
    ['a missing flags field', `00-${TRACE_ID}-${SPAN_ID}`],
    ['non-hex flags', `00-${TRACE_ID}-${SPAN_ID}-0g`],
    ['two headers joined by Node', `${VALID}, ${VALID}`],
    ['blank padding inside', `00-${TRACE_ID}-${SPAN_ID}- 1`],
  ])('refuses %s', (_name, value) => {
    expect(parseTraceparent(value)).toBeUndefined();
  });

  it('writes version 00 with two-digit flags', () => {
    expect(formatTraceparent({ traceId: TRACE_ID, spanId: SPAN_ID, flags: 1 })).toBe(VALID);
    expect(formatTraceparent({ traceId: TRACE_ID, spanId: SPAN_ID, flags: 0 })).toBe(`00-${TRACE_ID}-${SPAN_ID}-00`);
  });
});

describe('tracestate (W3C Trace Context §3.3)', () => {
  it('keeps a valid list, without blanks and empty members', () => {
    expect(parseTracestate('congo=t61rcWkgMzE')).toBe('congo=t61rcWkgMzE');
    expect(parseTracestate(' rojo=00f067aa0ba902b7 ,, congo=t61rcWkgMzE ')).toBe('rojo=00f067aa0ba902b7,congo=t61rcWkgMzE');
    expect(parseTracestate('tenant1@vendor=x,a_b-c*d/e=v a l')).toBe('tenant1@vendor=x,a_b-c*d/e=v a l');
  });

  it.each([
    ['absent', undefined],
    ['only commas', ' , ,'],
    ['a member without =', 'congo'],
    ['an empty key', '=v'],
    ['an upper-case key', 'Congo=x'],
    ['an empty value', 'congo='],
    ['a control character in a value', 'congo=a\tb'],
    ['a value with =', 'congo=a=b'],
    ['a repeated key', 'congo=1,congo=2'],
    ['33 members', Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(',')],
    ['more than 512 characters', `k=${'v'.repeat(255)},l=${'v'.repeat(255)}`],
  ])('drops %s', (_name, value) => {
    expect(parseTracestate(value)).toBeUndefined();
  });
});

describe("the sender's context", () => {
  it('is taken with its tracestate when the traceparent is valid', () => {
    expect(incomingTrace({ traceparent: VALID, tracestate: 'congo=t61rcWkgMzE' })).toEqual({
      parent: { traceId: TRACE_ID, spanId: SPAN_ID, flags: 1 },
      tracestate: 'congo=t61rcWkgMzE',
    });
  });

  it('has no tracestate without a valid traceparent', () => {
    expect(incomingTrace({ traceparent: 'nonsense', tracestate: 'congo=t61rcWkgMzE' })).toEqual({});
    expect(incomingTrace({ tracestate: 'congo=t61rcWkgMzE' })).toEqual({});
  });

  it('passes through unchanged when no span of the gateway is exported', () => {
    expect(passThroughTrace(incomingTrace({ traceparent: VALID, tracestate: 'a=1' }))).toEqual({ traceparent: VALID, tracestate: 'a=1' });
  });

  it('is a new sampled trace when absent or invalid', () => {
    const first = passThroughTrace({});
    const second = passThroughTrace(incomingTrace({ traceparent: `00-${'0'.repeat(32)}-${SPAN_ID}-01` }));
    for (const made of [first, second]) {
      const parsed = parseTraceparent(made.traceparent)!;
      expect(parsed.flags).toBe(1);
      expect(made.tracestate).toBeUndefined();
    }
    expect(parseTraceparent(first.traceparent)!.traceId).not.toBe(parseTraceparent(second.traceparent)!.traceId);
  });
});

describe('new ids', () => {
  it('are lower-case hex of the right length, not zero, and distinct', () => {
    const traceIds = new Set(Array.from({ length: 1000 }, newTraceId));
    const spanIds = new Set(Array.from({ length: 1000 }, newSpanId));
    expect(traceIds.size).toBe(1000);
    expect(spanIds.size).toBe(1000);
    for (const id of traceIds) expect(id).toMatch(/^(?!0+$)[0-9a-f]{32}$/);
    for (const id of spanIds) expect(id).toMatch(/^(?!0+$)[0-9a-f]{16}$/);
  });
});
