import type { JSONWebKeySet } from 'jose';
import { keyForKid, type JwksSource } from './jwks-key';
import { verifyJwt, type JwtVerified } from './jwt';
import { audienceIs, senderNotAllowed, sharedKind } from './oidc-sender';
import { isRecord, parseJson, refuse, type FamilyRefused, type FamilyResult } from './result';

/** Microsoft Graph's change-notification publisher: the `azp` of every validation token. */
export const GRAPH_CHANGE_PUBLISHER_APP_ID = '0bf30f3b-4a52-48df-9a82-234910c4a086';
export const MICROSOFT_KEYS_URL = 'https://login.microsoftonline.com/common/discovery/v2.0/keys';
/** Graph sends one token per app and tenant in a batch; more than this is not Graph's. */
const MAX_TOKENS = 20;

export interface GraphRichOptions {
  /** The app (client) id that created the subscription: each token's audience. */
  appId: string;
  /** The tenants allowed (1–10); a token of another is `sender_not_allowed`. */
  tenantIds: readonly string[];
  /** Pinned JWKS: nothing is fetched. */
  jwks?: JSONWebKeySet;
}

export interface GraphRichInput {
  raw: Buffer;
  options: GraphRichOptions;
  toleranceSeconds: number;
  nowSeconds: number;
  keys: JwksSource;
}

/**
 * Microsoft Graph rich notifications (contract §10.1 D, sender only): every one of the body's
 * `validationTokens` is an RS256 token by `kid` from the pinned JWKS or Microsoft identity's,
 * `exp` required, `azp` Graph's publisher, audience the app, issuer
 * `https://sts.windows.net/<tenant>/` of a listed tenant, and every notification's `tenantId`
 * listed (else `sender_not_allowed`). The notifications' `clientState` is the graph preset's
 * check, not this one. Kind the notifications' shared `changeType`; no id is signed.
 */
export async function verifyGraphRich(input: GraphRichInput): Promise<FamilyResult> {
  const body = parseJson(input.raw);
  const tokens = isRecord(body) ? body.validationTokens : undefined;
  const value = isRecord(body) && Array.isArray(body.value) ? body.value : undefined;
  if (!Array.isArray(tokens) || tokens.length === 0 || tokens.length > MAX_TOKENS || !value) return refuse('signature_missing');
  const tenants = new Set(input.options.tenantIds.map((tenant) => tenant.toLowerCase()));
  let first: JwtVerified | undefined;
  for (const token of tokens) {
    const verified = await verifyToken(token, input);
    if (!verified.ok) return verified;
    const refusal = senderRefusal(verified, input.options.appId, tenants);
    if (refusal) return refusal;
    first ??= verified;
  }
  const items = value.map((item) => (isRecord(item) ? item : {}));
  const stray = items.find((item) => typeof item.tenantId !== 'string' || !tenants.has(item.tenantId.toLowerCase()));
  if (stray) return senderNotAllowed(stray.tenantId);
  return { ok: true, keySource: first!.key.keySource, kid: first!.key.kid, sender: input.options.appId, kind: sharedKind(items.map((item) => item.changeType)) };
}

function verifyToken(token: unknown, input: GraphRichInput): Promise<JwtVerified | FamilyRefused> {
  return verifyJwt(
    typeof token === 'string' ? token : undefined,
    (header) =>
      keyForKid(header.kid, 'RS256', input.options.jwks, () =>
        input.keys.jwks({ preset: 'graph-rich', source: 'microsoft-identity', url: MICROSOFT_KEYS_URL, kid: String(header.kid) }),
      ),
    { algorithm: 'RS256', toleranceSeconds: input.toleranceSeconds, nowSeconds: input.nowSeconds, requireExp: true },
  );
}

/** Graph's publisher, our app, a listed tenant's issuer; else who it was. */
function senderRefusal(verified: JwtVerified, appId: string, tenants: ReadonlySet<string>): FamilyRefused | undefined {
  const { azp, aud, iss } = verified.payload;
  const tenant = typeof iss === 'string' ? /^https:\/\/sts\.windows\.net\/([0-9a-fA-F-]{36})\/$/.exec(iss)?.[1] : undefined;
  if (azp !== GRAPH_CHANGE_PUBLISHER_APP_ID || !audienceIs(aud, appId) || !tenant || !tenants.has(tenant.toLowerCase())) {
    return senderNotAllowed(iss);
  }
  return undefined;
}
