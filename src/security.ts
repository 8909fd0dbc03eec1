import { hash, timingSafeEqual } from 'node:crypto';

/**
 * One-shot hashing (`crypto.hash`): no Hash object per call. The digest is taken as hex and a
 * Buffer made from it comes from Node's pool, where `digest()` allocates an ArrayBuffer of
 * its own: on Node 24, 0.4 µs against 1 µs (hex) and 2 µs (Buffer) for a token.
 */
export function sha256Hex(data: string | Buffer): string {
  return hash('sha256', data, 'hex');
}

function sha256(data: string | Buffer): Buffer {
  return Buffer.from(sha256Hex(data), 'hex');
}

/**
 * The one constant-time comparison of the gateway: every signature, token and hash check ends
 * here. Bytes of different lengths are refused without comparing: callers compare digests or
 * signatures whose length is fixed by the algorithm, never a secret's own length.
 */
export function sameBytes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Two texts (tokens of any length): both hashed first, so neither content nor length leaks through timing. */
export function sameText(presented: string, secret: string): boolean {
  return sameBytes(sha256(presented), sha256(secret)) && presented.length === secret.length;
}

/** Compares a presented secret with a stored SHA-256 in constant time (equal-length digests). */
export function secretMatches(presented: string | undefined, storedHash: string): boolean {
  if (presented === undefined || presented === '') return false;
  return sameBytes(sha256(presented), Buffer.from(storedHash, 'hex'));
}
