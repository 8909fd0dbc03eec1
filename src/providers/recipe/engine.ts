import { createHmac, verify as verifySignature, type KeyObject } from 'node:crypto';
import type { RequestHead, SignatureReason, SignedRequest, VerifyResult } from '../provider';
import { equalBytes, header, refused, timestampProblem } from '../schemes/signing';
import { signedBytes } from './content';
import { decodeSignature, presented, type Presented } from './presented';
import { isPublicKeyAlgorithm, publicKeyOf, type PublicKeyAlgorithm } from './public-keys';
import { signatureHeadersOf, type Recipe } from './schema';
import { secretKey } from './secret-key';
import { timestampSeconds } from './timestamp';

const HMAC_DIGEST: Record<string, { hash: string; bytes: number }> = {
  'hmac-sha1': { hash: 'sha1', bytes: 20 },
  'hmac-sha256': { hash: 'sha256', bytes: 32 },
  'hmac-sha512': { hash: 'sha512', bytes: 64 },
};

/** Whether decoded signature bytes have the primitive's length (else the value is not a signature: signature_missing). */
function plausibleLength(algorithm: Recipe['algorithm'], bytes: number): boolean {
  if (algorithm in HMAC_DIGEST) return bytes === HMAC_DIGEST[algorithm].bytes;
  if (algorithm === 'ed25519') return bytes === 64;
  // DER ECDSA P-256 is 8-72 bytes, raw r||s 64; RSA at least 2048 bits, at most 8192.
  if (algorithm === 'ecdsa-p256-sha256') return bytes >= 8 && bytes <= 72;
  return bytes >= 256 && bytes <= 1024;
}

/**
 * A public-key verification hashes the whole signed content again for each (key, signature)
 * pair (Ed25519: SHA-512 over the body), so fewer signatures are looked at than for an HMAC,
 * whose cost is one pass per key whatever the count: two, one per key a rotating sender signs with.
 */
export const MAX_PUBLIC_KEY_SIGNATURES = 2;

interface Read {
  signatures: Buffer[];
  timestamp?: string;
  id?: string;
}

/** The headers read and checked: usable signatures, a fresh signed timestamp, the signed id, the required headers. */
function read(head: RequestHead, recipe: Recipe): Read | SignatureReason {
  for (const [name, value] of Object.entries(recipe.requireHeaders ?? {})) {
    if (header(head.headers, name.toLowerCase()) !== value) return 'signature_missing';
  }
  const found: Presented = presented(head.headers, recipe, signatureHeadersOf(recipe));
  const signatures = found.signatures
    .map((text) => decodeSignature(text, recipe.signature.encoding))
    .filter((bytes): bytes is Buffer => bytes !== undefined && plausibleLength(recipe.algorithm, bytes.length));
  if (signatures.length === 0) return 'signature_missing';
  const result: Read = { signatures };
  if (recipe.id) {
    result.id = header(head.headers, recipe.id.header);
    if (result.id === undefined) return 'signature_missing';
  }
  if (recipe.signedContent.includes('{timestamp}') && recipe.timestamp) {
    if (found.timestamp === undefined) return 'signature_missing';
    const seconds = timestampSeconds(found.timestamp, recipe.timestamp.unit);
    if (seconds === undefined) return 'signature_missing';
    // 0: the scheme's retries keep their first timestamp and the trigger set no tolerance (SendGrid).
    if (head.toleranceSeconds > 0) {
      const problem = timestampProblem(seconds, head.nowSeconds, head.toleranceSeconds);
      if (problem) return problem;
    }
    result.timestamp = found.timestamp;
  }
  return result;
}

function publicKeyVerifies(algorithm: PublicKeyAlgorithm, content: Buffer, key: KeyObject, signature: Buffer): boolean {
  try {
    if (algorithm === 'ed25519') return verifySignature(null, content, key, signature);
    if (algorithm === 'rsa-pkcs1-sha256') return verifySignature('sha256', content, key, signature);
    // DER when the bytes are a DER SEQUENCE of their own length; 64 bytes may also be raw r||s (IEEE P1363).
    const der = signature[0] === 0x30 && signature[1] + 2 === signature.length;
    if (der && verifySignature('sha256', content, { key, dsaEncoding: 'der' }, signature)) return true;
    return signature.length === 64 && verifySignature('sha256', content, { key, dsaEncoding: 'ieee-p1363' }, signature);
  } catch {
    return false;
  }
}

/**
 * Every signature against every key (two while rotating), all pairs looked at whatever
 * matched, HMACs compared in constant time over equal-length bytes (contract §10.A 1).
 */
function anyMatch(request: SignedRequest, recipe: Recipe, read: Read): VerifyResult {
  const content = signedBytes(recipe, { raw: request.raw, timestamp: read.timestamp, id: read.id, url: request.url, headers: request.headers });
  let matched: string | undefined;
  if (isPublicKeyAlgorithm(recipe.algorithm)) {
    const signatures = read.signatures.slice(0, MAX_PUBLIC_KEY_SIGNATURES);
    for (const text of request.publicKeys ?? []) {
      const key = publicKeyOf(recipe.algorithm, text);
      if (!key) continue;
      for (const signature of signatures) {
        if (publicKeyVerifies(recipe.algorithm, content, key, signature) && matched === undefined) matched = text;
      }
    }
    return matched === undefined ? refused('signature_invalid') : { ok: true, secret: '' };
  }
  const { hash } = HMAC_DIGEST[recipe.algorithm];
  for (const secret of request.secrets) {
    const key = secretKey(secret, recipe.key);
    // An empty key would let anyone compute a valid signature.
    if (!key || key.length === 0) continue;
    const mac = createHmac(hash, key).update(content).digest();
    for (const signature of read.signatures) if (equalBytes(signature, mac) && matched === undefined) matched = secret;
  }
  return matched === undefined ? refused('signature_invalid') : { ok: true, secret: matched };
}

/** The engine every recipe runs on: one family (HMAC or a public key over a template of the raw bytes), any provider. */
export function recipeScheme(recipe: Recipe) {
  return {
    precheck(head: RequestHead): SignatureReason | undefined {
      const result = read(head, recipe);
      return typeof result === 'string' ? result : undefined;
    },
    verify(request: SignedRequest): VerifyResult {
      const result = read(request, recipe);
      return typeof result === 'string' ? refused(result) : anyMatch(request, recipe, result);
    },
  };
}
