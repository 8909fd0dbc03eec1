import type { JSONWebKeySet, JWK } from 'jose';
import type { KeyResult } from '../../keys/key-fetcher';
import { keyForKid, type JwksSource } from './jwks-key';
import { bearerToken, verifyJwt } from './jwt';
import { audienceIs, senderNotAllowed } from './oidc-sender';
import { isRecord, parseJson, refuse, shortString, type FamilyResult } from './result';

export const BOT_FRAMEWORK_ISSUER = 'https://api.botframework.com';
/** The `jwks_uri` of https://login.botframework.com/v1/.well-known/openidconfiguration. */
export const BOT_FRAMEWORK_KEYS_URL = 'https://login.botframework.com/v1/.well-known/keys';

export interface BotFrameworkOptions {
  /** The bot's Microsoft App ID: the token's audience. */
  appId: string;
  /** Pinned JWKS (with each key's `endorsements`): nothing is fetched. */
  jwks?: JSONWebKeySet;
}

export interface BotFrameworkInput {
  authorization: string | undefined;
  raw: Buffer;
  options: BotFrameworkOptions;
  toleranceSeconds: number;
  nowSeconds: number;
  keys: JwksSource;
}

/**
 * Bot Framework, Bot Connector to bot (contract §10.1 D, sender only): a bearer RS256 token by
 * `kid` from the pinned JWKS or login.botframework.com's, issuer https://api.botframework.com,
 * `exp`; the key must endorse the activity's `channelId` and the token's `serviceUrl` must be the
 * activity's (Microsoft's "Authenticate requests from the Bot Connector service"). A valid token
 * for another bot is `sender_not_allowed`. Kind activity `type`; id activity `id`.
 */
export async function verifyBotFramework(input: BotFrameworkInput): Promise<FamilyResult> {
  const { options } = input;
  const activity = parseJson(input.raw);
  const channelId = isRecord(activity) ? shortString(activity.channelId, 64) : undefined;
  const endorsed = (set: JSONWebKeySet): JSONWebKeySet => ({ keys: set.keys.filter((jwk) => endorses(jwk, channelId)) });
  const fetchEndorsed = (kid: string) => async (): Promise<KeyResult<JSONWebKeySet>> => {
    const fetched = await input.keys.jwks({ preset: 'bot-framework', source: 'bot-framework', url: BOT_FRAMEWORK_KEYS_URL, kid });
    return fetched.ok ? { ...fetched, value: endorsed(fetched.value) } : fetched;
  };
  const verified = await verifyJwt(
    bearerToken(input.authorization),
    (header) => keyForKid(header.kid, 'RS256', options.jwks && endorsed(options.jwks), fetchEndorsed(String(header.kid))),
    { algorithm: 'RS256', toleranceSeconds: input.toleranceSeconds, nowSeconds: input.nowSeconds, requireExp: true, issuer: BOT_FRAMEWORK_ISSUER },
  );
  if (!verified.ok) return verified;
  const { aud, serviceUrl } = verified.payload;
  if (!audienceIs(aud, options.appId)) return senderNotAllowed(typeof aud === 'string' ? aud : undefined);
  if (!isRecord(activity) || typeof serviceUrl !== 'string' || serviceUrl !== activity.serviceUrl) return refuse('signature_invalid');
  return {
    ok: true,
    keySource: verified.key.keySource,
    kid: verified.key.kid,
    sender: options.appId,
    kind: shortString(activity.type, 64),
    deliveryId: shortString(activity.id, 128),
  };
}

/** The key lists the channel among its `endorsements` (a key without them endorses nothing). */
function endorses(jwk: JWK, channelId: string | undefined): boolean {
  const endorsements = (jwk as JWK & { endorsements?: unknown }).endorsements;
  return channelId !== undefined && Array.isArray(endorsements) && endorsements.includes(channelId);
}
