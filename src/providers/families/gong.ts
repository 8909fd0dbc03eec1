import { importSPKI } from 'jose';
import { bearerToken, verifyJwt, type KeyCandidate } from './jwt';
import type { FamilyResult } from './result';

export interface GongInput {
  authorization: string | undefined;
  raw: Buffer;
  /** Gong's public key(s), PEM (SPKI), as the integration page shows it; two while rotating. */
  publicKeys: readonly string[];
  /** The trigger's public URL: the token's `webhook_url` must name it. */
  url: string;
  toleranceSeconds: number;
  nowSeconds: number;
}

/**
 * Gong (contract §10.1 D): `Authorization: Bearer <JWT>`, RS256 with the pinned key only,
 * `body_sha256` = SHA-256 hex of the raw body, `webhook_url` = this trigger's URL, `exp` within
 * the tolerance. No kind or delivery id is signed: the caller's body claim dedupes (§5).
 */
export async function verifyGong(input: GongInput): Promise<FamilyResult> {
  const candidates: KeyCandidate[] = [];
  for (const pem of input.publicKeys) {
    try {
      candidates.push({ key: await importSPKI(pem, 'RS256'), keySource: 'pinned' });
    } catch {
      // A key that does not import verifies nothing; PUT validation refuses it earlier.
    }
  }
  const verified = await verifyJwt(bearerToken(input.authorization), async () => ({ ok: true, candidates }), {
    algorithm: 'RS256',
    toleranceSeconds: input.toleranceSeconds,
    nowSeconds: input.nowSeconds,
    requireExp: true,
    bodyHash: { claim: 'body_sha256', raw: input.raw },
  });
  if (!verified.ok) return verified;
  if (verified.payload.webhook_url !== input.url) return { ok: false, reason: 'signature_invalid' };
  return { ok: true, keySource: 'pinned' };
}
