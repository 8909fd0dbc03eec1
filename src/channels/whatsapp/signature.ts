import { createHmac, timingSafeEqual } from 'node:crypto';

// Meta sends lower-case hex; upper case is accepted since it encodes the same bytes.
const SIGNATURE_HEADER = /^sha256=([0-9a-fA-F]{64})$/;

function hmacSha256(rawBody: Buffer | string, appSecret: string): Buffer {
  return createHmac('sha256', appSecret).update(rawBody).digest();
}

/** The full `X-Hub-Signature-256` value Meta would send for these bytes. */
export function signWhatsAppBody(rawBody: Buffer | string, appSecret: string): string {
  return `sha256=${hmacSha256(rawBody, appSecret).toString('hex')}`;
}

/** True when `header` has the form of a signature (`sha256=` + 64 hex): checkable before the body is read. */
export function isWellFormedSignature(header: string | undefined): boolean {
  return typeof header === 'string' && SIGNATURE_HEADER.test(header);
}

/**
 * Checks `X-Hub-Signature-256` against the raw body bytes (never a re-serialised body:
 * Meta escapes non-ASCII and `/`, so JSON.stringify would produce different bytes).
 * Returns false, never throws, on any junk input.
 */
export function verifyWhatsAppSignature(
  rawBody: Buffer,
  header: string | undefined,
  appSecret: string,
): boolean {
  if (!Buffer.isBuffer(rawBody) || typeof header !== 'string') return false;
  // An empty key would let anyone compute a valid signature.
  if (typeof appSecret !== 'string' || appSecret.length === 0) return false;
  const match = SIGNATURE_HEADER.exec(header);
  if (!match) return false;
  const received = Buffer.from(match[1], 'hex');
  const expected = hmacSha256(rawBody, appSecret);
  return received.length === expected.length && timingSafeEqual(received, expected);
}
