import { FAMILY_FACTS } from './families/facts';
import { verifyGong } from './families/gong';
import { bearerPresent, familyPreset } from './family-preset';

/**
 * Gong automation-rule webhooks (contract §10.1 D): a bearer JWT, RS256 with the public key the
 * integration page shows (pinned, PEM), over the body's SHA-256 and naming this trigger's URL.
 */
export const gong = familyPreset({
  name: 'gong',
  title: 'Gong',
  verifies: 'Authorization: Bearer JWT, RS256 with the pinned public key (PEM); body_sha256 = SHA-256 hex of the body; webhook_url = the trigger\'s public URL; exp within the tolerance',
  deliveryIdSource: 'none signed: the body claim (same body within the window is a replay)',
  facts: FAMILY_FACTS.gong,
  signedId: false,
  signsUrl: () => true,
  publicKeyAlgorithm: 'rsa-pkcs1-sha256',
  signatureHeaders: ['authorization'],
  fallbackKind: 'call',
  precheck: bearerPresent,
  verifyFamily: (request) =>
    verifyGong({
      authorization: request.headers.authorization,
      raw: request.raw,
      publicKeys: request.publicKeys ?? [],
      url: request.url,
      toleranceSeconds: request.toleranceSeconds,
      nowSeconds: request.nowSeconds,
    }),
});
