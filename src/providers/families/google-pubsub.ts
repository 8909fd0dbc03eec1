import type { JSONWebKeySet } from 'jose';
import { keyForKid, type JwksSource } from './jwks-key';
import { bearerToken, verifyJwt } from './jwt';
import { isRecord, parseJson, shortString, type FamilyResult } from './result';

export const GOOGLE_CERTS_URL = 'https://www.googleapis.com/oauth2/v3/certs';
const GOOGLE_ISSUERS = ['https://accounts.google.com', 'accounts.google.com'];
/** google-auth-library's longest accepted token life; `iat` further back is refused. */
const MAX_TOKEN_AGE_SECONDS = 86_400;

export interface GooglePubsubOptions {
  /** The `aud` the push subscription was given (default: the trigger's URL, set by the caller). */
  audience: string;
  /** The service accounts allowed to push (1–10); another valid one is `sender_not_allowed`. */
  serviceAccountEmails: readonly string[];
  /** Pinned JWKS: nothing is fetched. */
  jwks?: JSONWebKeySet;
  /** The message attribute that names the kind (absent: kind `message`). */
  kindAttribute?: string;
}

export interface GooglePubsubInput {
  authorization: string | undefined;
  raw: Buffer;
  options: GooglePubsubOptions;
  toleranceSeconds: number;
  nowSeconds: number;
  keys: JwksSource;
}

/**
 * Google Cloud Pub/Sub push with OIDC (contract §10.1 D): the bearer token authenticates the
 * sender, not the body. RS256 by `kid` from the pinned JWKS or Google's; `iss`, `aud`, `exp`,
 * `iat`; `email_verified` and `email` one of the trigger's service accounts. Kind from
 * `message.attributes[kindAttribute]`, else `message`; id `message.messageId`.
 */
export async function verifyGooglePubsub(input: GooglePubsubInput): Promise<FamilyResult> {
  const { options } = input;
  const fetchGoogle = (kid: string) => () =>
    input.keys.jwks({ preset: 'google-pubsub', source: 'google-oidc', url: GOOGLE_CERTS_URL, kid });
  const verified = await verifyJwt(
    bearerToken(input.authorization),
    (header) => keyForKid(header.kid, 'RS256', options.jwks, fetchGoogle(String(header.kid))),
    {
      algorithm: 'RS256',
      toleranceSeconds: input.toleranceSeconds,
      nowSeconds: input.nowSeconds,
      maxAgeSeconds: MAX_TOKEN_AGE_SECONDS,
      requireExp: true,
      issuer: GOOGLE_ISSUERS,
      audience: options.audience,
    },
  );
  if (!verified.ok) return verified;
  const email = verified.payload.email;
  const allowed = options.serviceAccountEmails.map((entry) => entry.toLowerCase());
  if (verified.payload.email_verified !== true || typeof email !== 'string' || !allowed.includes(email.toLowerCase())) {
    return { ok: false, reason: 'sender_not_allowed', ...(typeof email === 'string' && email.length <= 256 ? { sender: email } : {}) };
  }
  return { ok: true, keySource: verified.key.keySource, kid: verified.key.kid, sender: email, ...pushEvent(parseJson(input.raw), options) };
}

function pushEvent(body: unknown, options: GooglePubsubOptions): { kind: string; deliveryId?: string } {
  const message = isRecord(body) && isRecord(body.message) ? body.message : {};
  const attributes = isRecord(message.attributes) ? message.attributes : {};
  const kind = (options.kindAttribute && shortString(attributes[options.kindAttribute])) || 'message';
  return { kind, deliveryId: shortString(message.messageId, 128) ?? shortString(message.message_id, 128) };
}
