import { isoFormatter } from '../../src/observability/iso-time';

describe('isoFormatter', () => {
  it('formats as toISOString does, again whenever the millisecond changes', () => {
    const format = isoFormatter();
    const times = [0, 1_764_000_000_000, 1_764_000_000_000, 1_764_000_000_001, 1_764_000_000_000, 253_402_300_799_999, -1];
    for (const ms of times) expect(format(ms)).toBe(new Date(ms).toISOString());
  });

  it('refuses what toISOString refuses, and formats the next valid time after it', () => {
    const format = isoFormatter();
    expect(() => format(Number.NaN)).toThrow(RangeError);
    expect(() => format(8.64e15 + 1)).toThrow(RangeError);
    expect(format(5)).toBe('1970-01-01T00:00:00.005Z');
  });
});
