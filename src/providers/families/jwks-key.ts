import { importJWK, type CryptoKey, type JSONWebKeySet, type JWK } from 'jose';
import type { KeyRequest, KeyResult } from '../../keys/key-fetcher';
import type { KeyCandidate, JwtAlgorithm } from './jwt';
import { refuse, type FamilyRefused } from './result';

/** What a JWKS family needs of the key fetcher (src/keys/key-fetcher.ts satisfies it). */
export interface JwksSource {
  jwks(request: KeyRequest & { kid?: string }): Promise<KeyResult<JSONWebKeySet>>;
}

const imported = new WeakMap<JWK, Promise<CryptoKey | Uint8Array>>();

/** A JWK imported once per key object (the fetcher's cache keeps the object while it is fresh). */
async function importOnce(jwk: JWK, algorithm: JwtAlgorithm): Promise<CryptoKey | Uint8Array | undefined> {
  let key = imported.get(jwk);
  if (!key) {
    key = importJWK({ ...jwk, alg: algorithm }, algorithm);
    imported.set(jwk, key);
  }
  return key.catch(() => undefined);
}

/**
 * The key for a token's `kid`: from the pinned set when the trigger pins one (nothing fetched),
 * else from the allow-listed source through the fetcher. A token without a `kid`, or with one
 * neither set has, is `signature_invalid`; an unreachable source is `key_unavailable`.
 */
export async function keyForKid(
  kid: unknown,
  algorithm: JwtAlgorithm,
  pinned: JSONWebKeySet | undefined,
  fetch: () => Promise<KeyResult<JSONWebKeySet>>,
): Promise<{ ok: true; candidates: KeyCandidate[] } | FamilyRefused> {
  if (typeof kid !== 'string' || kid.length === 0 || kid.length > 256) return refuse('signature_invalid');
  let set = pinned;
  let keySource: KeyCandidate['keySource'] = 'pinned';
  if (!set) {
    const fetched = await fetch();
    if (!fetched.ok) return refuse(fetched.reason);
    set = fetched.value;
    keySource = fetched.keySource;
  }
  const jwk = set.keys.find((candidate) => candidate.kid === kid && (candidate.use === undefined || candidate.use === 'sig'));
  if (!jwk || (jwk.alg !== undefined && jwk.alg !== algorithm)) return refuse('signature_invalid');
  const key = await importOnce(jwk, algorithm);
  return key ? { ok: true, candidates: [{ key, keySource, kid }] } : refuse('signature_invalid');
}
