import { createHmac } from 'node:crypto';
import { sameBytes } from '../../security';

const HEX = /^(?:[0-9a-fA-F]{2})+$/;

/** A hex secret as key bytes (Adyen's form); undefined when it is not hex. */
export function hexKey(secret: string): Buffer | undefined {
  return HEX.test(secret) ? Buffer.from(secret, 'hex') : undefined;
}

/**
 * Whether `presented` (decoded) equals HMAC-SHA256(key, data) for any key: every key is tried,
 * each comparison constant-time over equal lengths (contract §10.1 A.1).
 */
export function anyKeyMatches(keys: readonly Buffer[], data: string, presented: Buffer): boolean {
  let matched = false;
  for (const key of keys) {
    if (key.length === 0) continue;
    if (sameBytes(createHmac('sha256', key).update(data, 'utf8').digest(), presented)) matched = true;
  }
  return matched;
}
