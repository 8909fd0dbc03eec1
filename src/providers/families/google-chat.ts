import type { JSONWebKeySet } from 'jose';
import { keyForKid, type JwksSource } from './jwks-key';
import { bearerToken, verifyJwt } from './jwt';
import { audienceIs, senderNotAllowed } from './oidc-sender';
import { isRecord, parseJson, shortString, type FamilyResult } from './result';

export const GOOGLE_CHAT_ISSUER = 'chat@system.gserviceaccount.com';
export const GOOGLE_CHAT_KEYS_URL = 'https://www.googleapis.com/service_accounts/v1/jwk/chat@system.gserviceaccount.com';
/** google-auth-library's longest accepted token life. */
const MAX_TOKEN_AGE_SECONDS = 86_400;

export interface GoogleChatOptions {
  /** The Google Cloud project number of the Chat app: the token's audience. */
  projectNumber: string;
  /** Pinned JWKS of chat@system.gserviceaccount.com: nothing is fetched. */
  jwks?: JSONWebKeySet;
}

export interface GoogleChatInput {
  authorization: string | undefined;
  raw: Buffer;
  options: GoogleChatOptions;
  toleranceSeconds: number;
  nowSeconds: number;
  keys: JwksSource;
}

/**
 * Google Chat apps with the "project number" audience (contract §10.1 D, sender only): a bearer
 * RS256 token issued by chat@system.gserviceaccount.com, key by `kid` from the pinned JWKS or
 * that account's public JWKS; `exp`, `iat`. A valid token for another project is
 * `sender_not_allowed`. Kind the event's `type`; no id is signed.
 */
export async function verifyGoogleChat(input: GoogleChatInput): Promise<FamilyResult> {
  const { options } = input;
  const verified = await verifyJwt(
    bearerToken(input.authorization),
    (header) =>
      keyForKid(header.kid, 'RS256', options.jwks, () =>
        input.keys.jwks({ preset: 'google-chat', source: 'google-chat', url: GOOGLE_CHAT_KEYS_URL, kid: String(header.kid) }),
      ),
    {
      algorithm: 'RS256',
      toleranceSeconds: input.toleranceSeconds,
      nowSeconds: input.nowSeconds,
      maxAgeSeconds: MAX_TOKEN_AGE_SECONDS,
      requireExp: true,
      issuer: GOOGLE_CHAT_ISSUER,
    },
  );
  if (!verified.ok) return verified;
  const { aud } = verified.payload;
  if (!audienceIs(aud, options.projectNumber)) return senderNotAllowed(typeof aud === 'string' ? aud : undefined);
  const body = parseJson(input.raw);
  return { ok: true, keySource: verified.key.keySource, kid: verified.key.kid, sender: GOOGLE_CHAT_ISSUER, kind: isRecord(body) ? shortString(body.type, 64) : undefined };
}
