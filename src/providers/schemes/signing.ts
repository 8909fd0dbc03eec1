import { createHmac } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { sameBytes, sameText } from '../../security';
import type { SignatureReason, VerifyResult } from '../provider';

export type Algorithm = 'sha1' | 'sha256' | 'sha512';

/** More presented signatures than this are not looked at (a header is not a work queue). */
const MAX_CANDIDATES = 8;

export function hmac(algorithm: Algorithm, key: string | Buffer, ...parts: (string | Buffer)[]): Buffer {
  const mac = createHmac(algorithm, key);
  for (const part of parts) mac.update(part);
  return mac.digest();
}

/** Constant time for equal lengths; different lengths are refused without comparing (src/security.ts). */
export const equalBytes = sameBytes;

/** Shared-token equality (Telegram, GitLab, Graph's clientState), in constant time whatever the lengths. */
export const equalToken = sameText;

const HEX = /^(?:[0-9a-fA-F]{2})+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{2,3})?$/;

export function fromHex(text: string): Buffer | undefined {
  return HEX.test(text) ? Buffer.from(text, 'hex') : undefined;
}

export function fromBase64(text: string): Buffer | undefined {
  return text.length > 0 && BASE64.test(text) ? Buffer.from(text, 'base64') : undefined;
}

export function decode(text: string, encoding: 'hex' | 'base64'): Buffer | undefined {
  return encoding === 'hex' ? fromHex(text) : fromBase64(text);
}

/** The first value of a header, trimmed; undefined when absent or empty. */
export function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  const trimmed = first?.trim();
  return trimmed ? trimmed : undefined;
}

/** Unix seconds as sent (digits only), else undefined. */
export function unixSeconds(text: string | undefined): number | undefined {
  if (text === undefined || !/^\d{1,13}$/.test(text)) return undefined;
  return Number(text);
}

/** Both directions: a timestamp too far in the future is as suspicious as a stale one. */
export function timestampProblem(seconds: number, nowSeconds: number, toleranceSeconds: number): SignatureReason | undefined {
  return Math.abs(nowSeconds - seconds) > toleranceSeconds ? 'timestamp_out_of_tolerance' : undefined;
}

/**
 * Any presented signature that equals the expected one for any secret (rotation: two secrets;
 * several signatures in one header). Every pair is compared, so timing does not tell which matched.
 */
export function matchAny(
  secrets: readonly string[],
  presented: readonly Buffer[],
  expected: (secret: string) => Buffer,
): VerifyResult {
  let matched: string | undefined;
  const candidates = presented.slice(0, MAX_CANDIDATES);
  for (const secret of secrets) {
    // An empty key would let anyone compute a valid signature.
    if (secret.length === 0) continue;
    const mac = expected(secret);
    for (const candidate of candidates) if (equalBytes(candidate, mac) && matched === undefined) matched = secret;
  }
  return matched === undefined ? { ok: false, reason: 'signature_invalid' } : { ok: true, secret: matched };
}

export const refused = (reason: SignatureReason): VerifyResult => ({ ok: false, reason });

/** `prefix` + encoded signature (e.g. `sha256=<hex>`); undefined when the header has another shape. */
export function prefixed(value: string, prefix: string, encoding: 'hex' | 'base64'): Buffer | undefined {
  if (!value.startsWith(prefix)) return undefined;
  return decode(value.slice(prefix.length), encoding);
}
