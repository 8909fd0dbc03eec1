import type { JSONWebKeySet } from 'jose';
import { z } from 'zod';
import { FAMILY_FACTS } from './families/facts';
import { MICROSOFT_KEYS_URL, verifyGraphRich } from './families/graph-rich';
import { familyPreset } from './family-preset';
import { fixedJwksUrl, pinnedJwks } from './jwks-option';
import { isObject } from './body';
import { plainTextEcho } from './echo';

export const graphRichOptions = z.strictObject({
  appId: z.uuid('the app (client) id that created the subscription'),
  tenantIds: z.array(z.uuid('a tenant id')).min(1).max(10),
  jwks: pinnedJwks.optional(),
  jwksUrl: fixedJwksUrl(MICROSOFT_KEYS_URL, 'Microsoft identity').optional(),
});

type Options = z.infer<typeof graphRichOptions>;

/**
 * Microsoft Graph change notifications with resource data (contract §10.1 D, sender only): every
 * validationTokens entry from Microsoft identity, Graph's publisher, for the app, of a listed tenant.
 */
export const graphRich = familyPreset({
  name: 'graph-rich',
  title: 'Microsoft Graph rich notifications (validationTokens)',
  verifies: "every body validationTokens[]: RS256 by kid from options.jwks or login.microsoftonline.com/common/discovery/v2.0/keys; exp; azp Graph's publisher, aud options.appId, iss a tenant of options.tenantIds; every value[].tenantId listed",
  deliveryIdSource: 'none signed: the body claim (same body within the window is a replay)',
  facts: FAMILY_FACTS['graph-rich'],
  signedId: false,
  optionsSchema: graphRichOptions as unknown as z.ZodType<Record<string, unknown>>,
  fallbackKind: 'notification',
  handshake: {
    method: 'POST',
    signed: false,
    describe: 'POST ?validationToken=… : 200 text/plain, the URL-decoded token (subscription validation)',
    answer: ({ query }) => plainTextEcho(query.validationToken),
  },
  // The tokens are Microsoft's bearer proofs for the app, valid for an hour: verified, then never published.
  stripSecrets: (body) => {
    if (isObject(body)) delete body.validationTokens;
  },
  parsesBeforeVerifying: true,
  verifyFamily: (request, keys) => {
    const options = request.options as Options;
    return verifyGraphRich({
      raw: request.raw,
      options: { appId: options.appId, tenantIds: options.tenantIds, ...(options.jwks && { jwks: options.jwks as JSONWebKeySet }) },
      toleranceSeconds: request.toleranceSeconds,
      nowSeconds: request.nowSeconds,
      keys,
    });
  },
});
