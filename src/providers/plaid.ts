import { z } from 'zod';
import { FAMILY_FACTS } from './families/facts';
import { verifyPlaid } from './families/plaid';
import { familyPreset } from './family-preset';

export const plaidOptions = z.strictObject({
  clientId: z.string().regex(/^[A-Za-z0-9]{1,64}$/, "Plaid's client_id"),
  environment: z.enum(['production', 'sandbox']).default('production'),
});

type Options = z.infer<typeof plaidOptions>;

/**
 * Plaid (contract §10.1 D): `Plaid-Verification` ES256 JWT over the body's SHA-256, its key asked
 * of Plaid's /webhook_verification_key/get by kid (host fixed by options.environment), cached.
 */
export const plaid = familyPreset({
  name: 'plaid',
  title: 'Plaid',
  verifies: 'Plaid-Verification: ES256 JWT, key by kid from https://<environment>.plaid.com/webhook_verification_key/get; request_body_sha256; iat at most 5 min',
  deliveryIdSource: 'none signed: the body claim (same body within the window is a replay)',
  facts: FAMILY_FACTS.plaid,
  signedId: false,
  signatureHeaders: ['plaid-verification'],
  optionsSchema: plaidOptions as unknown as z.ZodType<Record<string, unknown>>,
  fallbackKind: 'webhook',
  precheck: (head) => (typeof head.headers['plaid-verification'] === 'string' && head.headers['plaid-verification'].length > 0 ? undefined : 'signature_missing'),
  verifyFamily: (request, keys) => {
    const options = request.options as Options;
    return verifyPlaid({
      verification: request.headers['plaid-verification'] as string | undefined,
      raw: request.raw,
      options: { clientId: options.clientId, environment: options.environment },
      secret: request.secrets[0],
      toleranceSeconds: request.toleranceSeconds,
      nowSeconds: request.nowSeconds,
      keys,
    });
  },
});
