import type { JSONWebKeySet } from 'jose';
import { keyForKid, type JwksSource } from './jwks-key';
import { verifyJwt } from './jwt';
import { audienceIs, senderNotAllowed, sharedKind } from './oidc-sender';
import { isRecord, parseJson, type FamilyResult } from './result';

export type ZohoDeskHost = 'desk.zoho.com' | 'desk.zoho.eu' | 'desk.zoho.in' | 'desk.zoho.com.au' | 'desk.zoho.jp' | 'desk.zoho.com.cn';

export interface ZohoDeskOptions {
  /** The Zoho Desk organization: the token's issuer must be `orgId:<orgId>`. */
  orgId: string;
  /** The webhook's id: the token's audience must be `webhookId:<webhookId>`. */
  webhookId: string;
  /** The data centre of the organization (default desk.zoho.com): its JWKS is the one used. */
  deskHost?: ZohoDeskHost;
  /** Pinned JWKS: nothing is fetched. */
  jwks?: JSONWebKeySet;
}

export interface ZohoDeskInput {
  /** The `X-ZDesk-JWT` header as sent. */
  token: string | undefined;
  raw: Buffer;
  options: ZohoDeskOptions;
  toleranceSeconds: number;
  nowSeconds: number;
  keys: JwksSource;
}

/**
 * Zoho Desk (contract §10.1 D, sender only): `X-ZDesk-JWT` is an RS256 token by `kid` from the
 * pinned JWKS or the data centre's `/.well-known/jwks.json`; `exp` required. A valid token of
 * another organization or webhook is `sender_not_allowed`. Kind the events' shared `eventType`;
 * no id is signed (the caller's body claim dedupes).
 */
export async function verifyZohoDesk(input: ZohoDeskInput): Promise<FamilyResult> {
  const { options } = input;
  const url = `https://${options.deskHost ?? 'desk.zoho.com'}/.well-known/jwks.json`;
  const verified = await verifyJwt(
    input.token?.trim(),
    (header) => keyForKid(header.kid, 'RS256', options.jwks, () => input.keys.jwks({ preset: 'zoho-desk', source: 'zoho-desk', url, kid: String(header.kid) })),
    { algorithm: 'RS256', toleranceSeconds: input.toleranceSeconds, nowSeconds: input.nowSeconds, requireExp: true },
  );
  if (!verified.ok) return verified;
  const { iss, aud } = verified.payload;
  if (iss !== `orgId:${options.orgId}` || !audienceIs(aud, `webhookId:${options.webhookId}`)) return senderNotAllowed(iss);
  const body = parseJson(input.raw);
  const events = Array.isArray(body) ? body : [body];
  return { ok: true, keySource: verified.key.keySource, kid: verified.key.kid, sender: iss, kind: sharedKind(events.map((event) => (isRecord(event) ? event.eventType : undefined))) };
}
