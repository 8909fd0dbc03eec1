import type { DeliveryEntry } from '../../src/delivery-log/delivery-log';
import { boundedEntry, MAX_ENTRY_BYTES, MAX_PATH_CHARS } from '../../src/delivery-log/entry-bounds';

/** Contract §13.1: whatever went into an entry, it comes out at most 4 KiB serialized. */
const base = (): DeliveryEntry => ({ at: '2026-11-28T00:00:00.000Z', requestId: 'req-1', status: 400, outcome: 'invalid', reason: 'schema_invalid', bytes: 10, ms: 1, clientIp: '127.0.0.1' });
const bytes = (entry: DeliveryEntry) => Buffer.byteLength(JSON.stringify(entry));

describe('boundedEntry', () => {
  it('leaves an ordinary entry as it is', () => {
    const entry = { ...base(), diagnostics: { errors: [{ instancePath: '/n', keyword: 'type', message: 'must be number' }] } };
    expect(boundedEntry(structuredClone(entry))).toEqual(entry);
  });

  it('cuts paths to 256 characters and keeps as many errors as fit, first ones first', () => {
    const errors = Array.from({ length: 20 }, (_, i) => ({ instancePath: `/${i}`.padEnd(50_000, 'k'), keyword: 'type', message: 'must be number' }));
    const entry = boundedEntry({ ...base(), diagnostics: { errors } });
    expect(bytes(entry)).toBeLessThanOrEqual(MAX_ENTRY_BYTES);
    const kept = entry.diagnostics!.errors as typeof errors;
    expect(kept.length).toBeGreaterThan(5);
    expect(kept.map((e) => e.instancePath)).toEqual(errors.slice(0, kept.length).map((e) => e.instancePath.slice(0, MAX_PATH_CHARS)));
  });

  it('stays under 4 KiB when every string escapes to 6 bytes a character', () => {
    const control = '\u0001'.repeat(10_000);
    const errors = Array.from({ length: 20 }, () => ({ instancePath: control, keyword: control, message: control }));
    const entry: DeliveryEntry = { ...base(), requestId: control, idempotencyKey: control, deliveryId: control, kind: control, eventId: control, clientIp: control, diagnostics: { errors } };
    const bounded = boundedEntry(entry);
    expect(bytes(bounded)).toBeLessThanOrEqual(MAX_ENTRY_BYTES);
    expect(bounded.idempotencyKey!.length).toBeGreaterThan(0);
  });

  it('cuts the strings of signature diagnostics too', () => {
    const entry = boundedEntry({ ...base(), diagnostics: { scheme: 'hmac', headerSeen: 'x'.repeat(10_000), secretsTried: 1 } });
    expect(entry.diagnostics).toEqual({ scheme: 'hmac', headerSeen: 'x'.repeat(256), secretsTried: 1 });
  });

  it('stays under 4 KiB for entries of every length and alphabet (escapes, 2-, 3- and 4-byte characters)', () => {
    const alphabets = ['a', '\u00e9', '\u20ac', '\u{1F600}', '\u0001', '"'];
    let seed = 7;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const text = () => alphabets[next(alphabets.length)].repeat(next(400));
    for (let i = 0; i < 500; i++) {
      const entry: DeliveryEntry = { ...base(), requestId: text(), idempotencyKey: text(), deliveryId: text(), kind: text(), eventId: text(), clientIp: text(), reason: text() };
      if (i % 2) entry.diagnostics = { scheme: text(), headerSeen: text(), signaturesInHeader: 1, secretsTried: 2, bodySha256: null, bodyBytes: 10 };
      expect(bytes(boundedEntry(entry))).toBeLessThanOrEqual(MAX_ENTRY_BYTES);
    }
  });
});
