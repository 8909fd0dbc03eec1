import { bearerToken, verifyJwt, type KeyCandidate } from './jwt';
import { isRecord, parseJson, shortString, type FamilyResult } from './result';

export interface VonageInput {
  /** The `Authorization` header as sent. */
  authorization: string | undefined;
  raw: Buffer;
  /** The signature secret(s) of the Vonage account (two while rotating). */
  secrets: readonly string[];
  toleranceSeconds: number;
  nowSeconds: number;
}

/**
 * Vonage signed webhooks (contract §10.1 D): `Authorization: Bearer <JWT>`, HS256 with the
 * signature secret and nothing else, `payload_hash` = SHA-256 hex of the raw body, `iat` within
 * the tolerance. Kind `message.status.<status>` or `message.inbound`; id `message_uuid[:status]`.
 */
export async function verifyVonage(input: VonageInput): Promise<FamilyResult> {
  const candidates: KeyCandidate[] = input.secrets
    .filter((secret) => secret.length > 0)
    .map((secret) => ({ key: Buffer.from(secret, 'utf8'), keySource: 'pinned' }));
  const verified = await verifyJwt(bearerToken(input.authorization), async () => ({ ok: true, candidates }), {
    algorithm: 'HS256',
    toleranceSeconds: input.toleranceSeconds,
    nowSeconds: input.nowSeconds,
    maxAgeSeconds: 0,
    bodyHash: { claim: 'payload_hash', raw: input.raw },
  });
  if (!verified.ok) return verified;
  return { ok: true, keySource: 'pinned', ...vonageEvent(parseJson(input.raw)) };
}

function vonageEvent(body: unknown): { kind?: string; deliveryId?: string } {
  if (!isRecord(body)) return {};
  const uuid = shortString(body.message_uuid, 128);
  const status = shortString(body.status, 64);
  return {
    kind: status ? `message.status.${status}` : 'message.inbound',
    deliveryId: uuid && (status ? `${uuid}:${status}` : uuid),
  };
}

/** The header precheck (contract §10.1 A.2): no bearer token → `signature_missing` before the body is read. */
export const vonagePrecheck = (authorization: string | undefined) => (bearerToken(authorization) ? undefined : 'signature_missing' as const);
