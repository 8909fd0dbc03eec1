import { X509Certificate } from 'node:crypto';
import type { JSONWebKeySet } from 'jose';

const MINUTE_MS = 60_000;
export const MIN_JWKS_TTL_MS = 5 * MINUTE_MS;
export const MAX_TTL_MS = 24 * 60 * MINUTE_MS;
/** More keys than any provider publishes; a larger set is not a key set. */
const MAX_JWKS_KEYS = 100;

export interface Material<T> {
  value: T;
  ttlMs: number;
}

/**
 * A PEM certificate kept until its notAfter, at most 24 h. One that is not valid now (expired,
 * or not yet valid) is not used.
 */
export function parseCertificate(body: Buffer, nowMs: number): Material<X509Certificate> | undefined {
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(body);
  } catch {
    return undefined;
  }
  const notBefore = Date.parse(certificate.validFrom);
  const notAfter = Date.parse(certificate.validTo);
  if (!(notBefore <= nowMs && nowMs < notAfter)) return undefined;
  return { value: certificate, ttlMs: Math.min(notAfter - nowMs, MAX_TTL_MS) };
}

/** More certificates than any provider's chain file holds (leaf and intermediates). */
const MAX_CHAIN_LENGTH = 5;
const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]+?-----END CERTIFICATE-----/g;

/**
 * A PEM file of a leaf and its intermediates (PayPal's certificate URL), leaf first; kept until
 * the first notAfter, at most 24 h. A chain with a certificate not valid now is not used.
 */
export function parseCertificateChain(body: Buffer, nowMs: number): Material<X509Certificate[]> | undefined {
  const blocks = body.toString('latin1').match(PEM_BLOCK) ?? [];
  if (blocks.length === 0 || blocks.length > MAX_CHAIN_LENGTH) return undefined;
  const chain: X509Certificate[] = [];
  let ttlMs = MAX_TTL_MS;
  for (const block of blocks) {
    const material = parseCertificate(Buffer.from(block), nowMs);
    if (!material) return undefined;
    chain.push(material.value);
    ttlMs = Math.min(ttlMs, material.ttlMs);
  }
  return { value: chain, ttlMs };
}

/** `max-age` of Cache-Control held within 5 min–24 h; none (or no-store) is the floor. */
export function jwksTtl(cacheControl: string | string[] | undefined): number {
  const text = Array.isArray(cacheControl) ? cacheControl.join(',') : (cacheControl ?? '');
  const maxAge = /(?:^|[,\s])max-age\s*=\s*"?(\d{1,10})"?/i.exec(text);
  const ms = maxAge ? Number(maxAge[1]) * 1000 : 0;
  return Math.min(Math.max(ms, MIN_JWKS_TTL_MS), MAX_TTL_MS);
}

/** `{ keys: [ { kty, … } ] }`, else undefined. */
export function parseJwks(body: Buffer, cacheControl: string | string[] | undefined): Material<JSONWebKeySet> | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  const keys = (parsed as { keys?: unknown })?.keys;
  if (!Array.isArray(keys) || keys.length > MAX_JWKS_KEYS) return undefined;
  if (!keys.every((key) => typeof key === 'object' && key !== null && typeof (key as { kty?: unknown }).kty === 'string')) return undefined;
  return { value: { keys } as JSONWebKeySet, ttlMs: jwksTtl(cacheControl) };
}

export function hasKid(set: JSONWebKeySet, kid: string): boolean {
  return set.keys.some((key) => key.kid === kid);
}
