import { z } from 'zod';

/** An RSA key of a pinned JWKS as the platforms publish it (extra members such as Bot Framework's `endorsements` kept). */
const rsaJwk = z.looseObject({
  kty: z.literal('RSA'),
  kid: z.string().min(1).max(256),
  n: z.string().min(1).max(2048),
  e: z.string().min(1).max(16),
});

/** `options.jwks` of the OIDC presets: pinned keys, nothing fetched. */
export const pinnedJwks = z.strictObject({ keys: z.array(rsaJwk).min(1).max(20) });

/** `options.jwksUrl`: only the one URL the preset fetches (contract §10.1 F); a trigger cannot add another. */
export const fixedJwksUrl = (url: string, owner: string) => z.literal(url, { message: `only ${owner}'s own key set: ${url}` });
