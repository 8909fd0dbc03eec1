import { createHash, timingSafeEqual } from 'node:crypto';

export function sha256Hex(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Compares a presented secret with a stored SHA-256 in constant time (equal-length digests). */
export function secretMatches(presented: string | undefined, storedHash: string): boolean {
  if (presented === undefined || presented === '') return false;
  const a = createHash('sha256').update(presented).digest();
  const b = Buffer.from(storedHash, 'hex');
  return b.length === a.length && timingSafeEqual(a, b);
}
