import { importJWK, type JWK } from 'jose';
import type { KeyRequest, KeyResult } from '../../keys/key-fetcher';
import { verifyJwt, type KeyCandidate } from './jwt';
import { isRecord, parseJson, refuse, shortString, type FamilyRefused, type FamilyResult } from './result';

/** What the Plaid family needs of the key fetcher (src/keys/key-fetcher.ts satisfies it). */
export interface PlaidKeySource {
  postJson(request: KeyRequest & { json: unknown; cacheKey: string; ttlMs: number }): Promise<KeyResult<unknown>>;
}

export interface PlaidOptions {
  clientId: string;
  /** Fixes the key host: `https://<environment>.plaid.com`. */
  environment: 'production' | 'sandbox';
}

export interface PlaidInput {
  /** The `Plaid-Verification` header as sent. */
  verification: string | undefined;
  raw: Buffer;
  options: PlaidOptions;
  /** The Plaid secret of that environment (sent to Plaid's key API only). */
  secret: string;
  toleranceSeconds: number;
  nowSeconds: number;
  keys: PlaidKeySource;
}

/** Plaid's guide: a token older than five minutes is refused. */
const MAX_AGE_SECONDS = 300;
/** Keys by kid are long-lived; re-asked hourly so that one Plaid marks `expired_at` stops being used within the hour. */
const KEY_TTL_MS = 3_600_000;

/**
 * Plaid (contract §10.1 D): `Plaid-Verification` is an ES256 JWT whose key Plaid's
 * `/webhook_verification_key/get` gives by `kid` (host fixed by the environment, §10.1 F);
 * `iat` at most five minutes old, `request_body_sha256` = SHA-256 hex of the raw body. A key
 * with a past `expired_at` is not used. Kind `webhook_type.webhook_code`; no id is signed (the
 * caller's body claim dedupes, §5).
 */
export async function verifyPlaid(input: PlaidInput): Promise<FamilyResult> {
  const verified = await verifyJwt(input.verification?.trim(), (header) => plaidKey(header.kid, input), {
    algorithm: 'ES256',
    // iat within five minutes either way, whatever a trigger's tolerance says.
    toleranceSeconds: Math.min(input.toleranceSeconds, MAX_AGE_SECONDS),
    nowSeconds: input.nowSeconds,
    maxAgeSeconds: 0,
    bodyHash: { claim: 'request_body_sha256', raw: input.raw },
  });
  if (!verified.ok) return verified;
  return { ok: true, keySource: verified.key.keySource, kid: verified.key.kid, kind: plaidKind(parseJson(input.raw)) };
}

async function plaidKey(kid: unknown, input: PlaidInput): Promise<{ ok: true; candidates: KeyCandidate[] } | FamilyRefused> {
  if (typeof kid !== 'string' || kid.length === 0 || kid.length > 256) return refuse('signature_invalid');
  const { clientId, environment } = input.options;
  const answer = await input.keys.postJson({
    preset: 'plaid',
    source: 'plaid',
    url: `https://${environment}.plaid.com/webhook_verification_key/get`,
    json: { client_id: clientId, secret: input.secret, key_id: kid },
    cacheKey: `${clientId} ${kid}`,
    ttlMs: KEY_TTL_MS,
  });
  if (!answer.ok) return refuse(answer.reason);
  const key = isRecord(answer.value) && isRecord(answer.value.key) ? (answer.value.key as JWK & { expired_at?: unknown }) : undefined;
  if (!key || key.kid !== kid || key.kty !== 'EC' || key.crv !== 'P-256') return refuse('signature_invalid');
  if (typeof key.expired_at === 'number' && key.expired_at <= input.nowSeconds) return refuse('signature_invalid');
  try {
    const { kty, crv, x, y } = key;
    return { ok: true, candidates: [{ key: await importJWK({ kty, crv, x, y }, 'ES256'), keySource: answer.keySource, kid }] };
  } catch {
    return refuse('signature_invalid');
  }
}

function plaidKind(body: unknown): string | undefined {
  if (!isRecord(body)) return undefined;
  const type = shortString(body.webhook_type, 64);
  const code = shortString(body.webhook_code, 128);
  return type && code ? `${type}.${code}` : undefined;
}
