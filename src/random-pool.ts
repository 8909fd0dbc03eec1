import { randomFillSync } from 'node:crypto';

// Random bytes from a pool refilled 4 KiB at a time (as randomUUID does), so that the ids and
// tokens a request needs cost no system call each.
const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let offset = POOL_BYTES;

/** `bytes` (at most 4096) fresh random bytes, as text. */
export function randomText(bytes: number, encoding: 'hex' | 'base64url'): string {
  if (offset + bytes > POOL_BYTES) {
    randomFillSync(pool);
    offset = 0;
  }
  const text = pool.toString(encoding, offset, offset + bytes);
  offset += bytes;
  return text;
}
