import { decodeProtectedHeader, jwtVerify, type CryptoKey, type JWTPayload, type KeyObject, type ProtectedHeaderParameters } from 'jose';
import { sameBytes, sha256Hex } from '../../security';
import { refuse, type FamilyRefused, type KeySourceKind } from './result';

export type JwtAlgorithm = 'HS256' | 'RS256' | 'ES256';

export interface KeyCandidate {
  key: CryptoKey | KeyObject | Uint8Array;
  keySource: KeySourceKind;
  kid?: string;
}

/**
 * The keys a token may be checked with, chosen by the caller from what it pins or fetches, from
 * the header's `kid` only: a header's `jku`, `x5u`, `jwk` or `x5c` is never looked at.
 */
export type KeyChoice = (header: ProtectedHeaderParameters) => Promise<{ ok: true; candidates: KeyCandidate[] } | FamilyRefused>;

export interface JwtPolicy {
  /** Pinned by the preset; a token naming any other (`none`, HS256 against an RSA key) is refused. */
  algorithm: JwtAlgorithm;
  toleranceSeconds: number;
  nowSeconds: number;
  /** `iat` is required and at most this old (0: within the tolerance either way); absent: `iat` not required. */
  maxAgeSeconds?: number;
  /** `exp` required (OIDC). */
  requireExp?: boolean;
  issuer?: string | string[];
  audience?: string;
  /** The claim that carries the SHA-256 (hex) of the raw body: the body is bound to the token. */
  bodyHash?: { claim: string; raw: Buffer };
}

export type JwtVerified = { ok: true; payload: JWTPayload; header: ProtectedHeaderParameters; key: KeyCandidate };

/** Longer than any provider's token: a megabyte header is not parsed. */
const MAX_TOKEN_LENGTH = 8192;
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** The token of `Authorization: Bearer <token>` (the scheme's case ignored), else undefined. */
export function bearerToken(authorization: string | undefined): string | undefined {
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization ?? '');
  return match?.[1];
}

/**
 * A JWT checked with jose under the caller's policy: algorithm pinned, key from the caller's
 * choice (any of several, for rotation), `iat`/`exp` within the tolerance, issuer and audience,
 * and the body bound through its hash claim.
 */
export async function verifyJwt(token: string | undefined, choose: KeyChoice, policy: JwtPolicy): Promise<JwtVerified | FamilyRefused> {
  if (token === undefined || token.length > MAX_TOKEN_LENGTH || !COMPACT_JWS.test(token)) return refuse('signature_missing');
  let header: ProtectedHeaderParameters;
  try {
    header = decodeProtectedHeader(token);
  } catch {
    return refuse('signature_missing');
  }
  if (header.alg !== policy.algorithm) return refuse('signature_invalid');
  const choice = await choose(header);
  if (!choice.ok) return choice;
  for (const candidate of choice.candidates) {
    const outcome = await verifyWith(token, candidate, policy);
    if (outcome === 'bad_signature') continue;
    if (typeof outcome === 'string') return refuse(outcome);
    if (policy.bodyHash && !bodyMatches(outcome.payload[policy.bodyHash.claim], policy.bodyHash.raw)) return refuse('signature_invalid');
    return { ok: true, payload: outcome.payload, header, key: candidate };
  }
  return refuse('signature_invalid');
}

async function verifyWith(
  token: string,
  candidate: KeyCandidate,
  policy: JwtPolicy,
): Promise<{ payload: JWTPayload } | 'bad_signature' | 'signature_invalid' | 'timestamp_out_of_tolerance'> {
  try {
    const { payload } = await jwtVerify(token, candidate.key, {
      algorithms: [policy.algorithm],
      clockTolerance: policy.toleranceSeconds,
      currentDate: new Date(policy.nowSeconds * 1000),
      maxTokenAge: policy.maxAgeSeconds,
      requiredClaims: [...(policy.maxAgeSeconds === undefined ? [] : ['iat']), ...(policy.requireExp ? ['exp'] : [])],
      issuer: policy.issuer,
      audience: policy.audience,
    });
    return { payload };
  } catch (error) {
    return classify(error);
  }
}

function classify(error: unknown): 'bad_signature' | 'signature_invalid' | 'timestamp_out_of_tolerance' {
  const { code, claim, reason } = (error ?? {}) as { code?: string; claim?: string; reason?: string };
  if (code === 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED') return 'bad_signature';
  if (code === 'ERR_JWT_EXPIRED') return 'timestamp_out_of_tolerance';
  // A stale or future iat/nbf is a timing problem; a missing or malformed one is a bad token.
  const timing = code === 'ERR_JWT_CLAIM_VALIDATION_FAILED' && (claim === 'iat' || claim === 'nbf') && reason === 'check_failed';
  return timing ? 'timestamp_out_of_tolerance' : 'signature_invalid';
}

/** The claim equals the SHA-256 hex of the raw body (either case), in constant time. */
function bodyMatches(claim: unknown, raw: Buffer): boolean {
  if (typeof claim !== 'string') return false;
  const expected = Buffer.from(sha256Hex(raw));
  return sameBytes(Buffer.from(claim.toLowerCase()), expected);
}
