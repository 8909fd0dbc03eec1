import { createHash, createPublicKey, type KeyObject } from 'node:crypto';
import { fromBase64, fromHex } from '../schemes/signing';

/** The public-key primitives a recipe may name (contract §10.1 C). */
export const PUBLIC_KEY_ALGORITHMS = ['ed25519', 'ecdsa-p256-sha256', 'rsa-pkcs1-sha256'] as const;
export type PublicKeyAlgorithm = (typeof PUBLIC_KEY_ALGORITHMS)[number];

export function isPublicKeyAlgorithm(algorithm: string): algorithm is PublicKeyAlgorithm {
  return (PUBLIC_KEY_ALGORITHMS as readonly string[]).includes(algorithm);
}

/** SPKI DER header of an Ed25519 key: a raw 32-byte key appended makes the whole SPKI. */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
/** Standard Webhooks writes its Ed25519 public keys `whpk_` + base64. */
const STANDARD_WEBHOOKS_PREFIX = 'whpk_';
const MIN_RSA_BITS = 2048;
const MAX_KEY_TEXT = 8192;
/** Any PEM block of a private key (PKCS#8, encrypted PKCS#8, PKCS#1, SEC1, OpenSSH), wherever it is in the text. */
const PRIVATE_PEM = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/;

/**
 * Why a trigger may not be given this text as a public key although it decodes to one:
 * createPublicKey derives the public key from a private PEM, and publicKeys are stored in
 * clear (not sealed like secrets). Checked at PUT only, so a stored trigger keeps verifying.
 */
export function privateKeyProblem(text: string): string | undefined {
  return PRIVATE_PEM.test(text) ? 'a private key: give only the public key (publicKeys are stored in clear)' : undefined;
}

function spki(der: Buffer): KeyObject | undefined {
  try {
    return createPublicKey({ key: der, format: 'der', type: 'spki' });
  } catch {
    return undefined;
  }
}

function pem(text: string): KeyObject | undefined {
  try {
    return createPublicKey({ key: text, format: 'pem' });
  } catch {
    return undefined;
  }
}

/** The key's bytes as written: PEM, hex or base64 (of a raw key or of SPKI DER). */
function candidate(text: string): KeyObject | Buffer | undefined {
  const trimmed = text.trim();
  if (trimmed.startsWith('-----BEGIN')) return pem(trimmed);
  const body = trimmed.startsWith(STANDARD_WEBHOOKS_PREFIX) ? trimmed.slice(STANDARD_WEBHOOKS_PREFIX.length) : trimmed;
  return fromHex(body) ?? fromBase64(body);
}

/**
 * A public key as the provider publishes it (hex, base64, base64 SPKI DER, PEM, Standard
 * Webhooks' `whpk_`), checked for the algorithm: Ed25519 32 bytes, ECDSA a P-256 key, RSA at
 * least 2048 bits. A string: why it is not usable.
 */
export function decodePublicKey(algorithm: PublicKeyAlgorithm, text: string): KeyObject | string {
  if (text.length > MAX_KEY_TEXT) return `a public key is at most ${MAX_KEY_TEXT} characters`;
  const found = candidate(text);
  if (found === undefined) return 'not a public key: expected PEM, hex or base64 (raw key or SPKI DER)';
  let key: KeyObject | undefined;
  if (Buffer.isBuffer(found)) {
    key = algorithm === 'ed25519' && found.length === 32 ? spki(Buffer.concat([ED25519_SPKI_PREFIX, found])) : spki(found);
  } else key = found;
  if (!key || key.type !== 'public') return 'not a public key: expected PEM, hex or base64 (raw key or SPKI DER)';
  return keyProblem(algorithm, key) ?? key;
}

function keyProblem(algorithm: PublicKeyAlgorithm, key: KeyObject): string | undefined {
  const details = key.asymmetricKeyDetails ?? {};
  switch (algorithm) {
    case 'ed25519':
      return key.asymmetricKeyType === 'ed25519' ? undefined : 'an Ed25519 public key (32 bytes) is expected';
    case 'ecdsa-p256-sha256':
      return key.asymmetricKeyType === 'ec' && details.namedCurve === 'prime256v1' ? undefined : 'a P-256 (prime256v1) public key is expected';
    case 'rsa-pkcs1-sha256':
      if (key.asymmetricKeyType !== 'rsa') return 'an RSA public key is expected';
      return (details.modulusLength ?? 0) >= MIN_RSA_BITS ? undefined : `an RSA key of at least ${MIN_RSA_BITS} bits is expected`;
  }
}

/** How a public key is shown on reads: the SHA-256 of its SPKI DER, so every key form of one key reads the same. */
export function fingerprint(key: KeyObject): string {
  return `sha256:${createHash('sha256').update(key.export({ format: 'der', type: 'spki' })).digest('hex')}`;
}

const CACHE_LIMIT = 256;
const cache = new Map<string, KeyObject | string>();

/** decodePublicKey, remembered per (algorithm, text): deliveries do not re-parse the trigger's keys. */
export function publicKeyOf(algorithm: PublicKeyAlgorithm, text: string): KeyObject | undefined {
  const id = `${algorithm}\n${text}`;
  let decoded = cache.get(id);
  if (decoded === undefined) {
    decoded = decodePublicKey(algorithm, text);
    if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
    cache.set(id, decoded);
  }
  return typeof decoded === 'string' ? undefined : decoded;
}
