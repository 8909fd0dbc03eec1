/** src/security.ts: the digests every token and body identity is compared by. */
import { createHash } from 'node:crypto';
import { sameText, secretMatches, sha256Hex } from '../../src/security';

describe('security', () => {
  it('sha256Hex is SHA-256 in hex, of a text (UTF-8) and of bytes', () => {
    // FIPS 180-2's "abc" vector.
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex('é')).toBe(createHash('sha256').update(Buffer.from('é', 'utf8')).digest('hex'));
    const bytes = Buffer.from([0, 255, 1, 254]);
    expect(sha256Hex(bytes)).toBe(createHash('sha256').update(bytes).digest('hex'));
  });

  it('secretMatches takes the token whose SHA-256 is stored, and nothing else', () => {
    const stored = sha256Hex('s3cret-token');
    expect(secretMatches('s3cret-token', stored)).toBe(true);
    expect(secretMatches('s3cret-tokem', stored)).toBe(false);
    expect(secretMatches('', stored)).toBe(false);
    expect(secretMatches(undefined, stored)).toBe(false);
  });

  it('sameText compares texts of any length', () => {
    expect(sameText('a-long-shared-secret', 'a-long-shared-secret')).toBe(true);
    expect(sameText('a-long-shared-secret', 'a-long-shared-secreT')).toBe(false);
    expect(sameText('short', 'shorter')).toBe(false);
  });
});
