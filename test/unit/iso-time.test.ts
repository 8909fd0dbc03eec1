import { isoFormatter } from '../../src/observability/iso-time';

describe('isoFormatter', () => {
  it('formats as toISOString does, again whenever the millisecond changes', () => {
    const format = isoFormatter();
    const times = [0, 1_764_000_000_000, 1_764_000_000_000, 1_764_000_000_001, 1_764_000_000_000, 253_402_300_799_999, -1];
    for (const ms of times) expect(format(ms)).toBe(new Date(ms).toISOString());
  });

  it('formats every millisecond of a second, across seconds, days and years, forwards and back', () => {
    const format = isoFormatter();
    const newYear = Date.UTC(2027, 0, 1);
    const times: number[] = [];
    for (let ms = newYear - 1500; ms < newYear + 1500; ms++) times.push(ms);
    for (const ms of [...times, ...times.reverse(), -1001, -1000, -999, -1, 0, 999, 1000]) {
      expect(format(ms)).toBe(new Date(ms).toISOString());
    }
  });

  it('formats a fraction of a millisecond as Date does (truncated), before and after a whole one of its second', () => {
    const format = isoFormatter();
    for (const ms of [1.5, 2, 2.75, 999.9, -0.5, -1.5, 1_764_000_000_123.4]) expect(format(ms)).toBe(new Date(ms).toISOString());
  });

  it('refuses what toISOString refuses, and formats the next valid time after it', () => {
    const format = isoFormatter();
    expect(() => format(Number.NaN)).toThrow(RangeError);
    expect(() => format(8.64e15 + 1)).toThrow(RangeError);
    expect(format(5)).toBe('1970-01-01T00:00:00.005Z');
  });

  it('refuses a millisecond past the last time even within the last second it formatted', () => {
    const format = isoFormatter();
    expect(format(8.64e15)).toBe('+275760-09-13T00:00:00.000Z');
    expect(() => format(8.64e15 + 1)).toThrow(RangeError);
    expect(format(-8.64e15 + 1)).toBe(new Date(-8.64e15 + 1).toISOString());
  });
});
