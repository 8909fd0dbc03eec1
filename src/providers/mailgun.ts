import { FAMILY_FACTS } from './families/facts';
import { verifyMailgun } from './families/mailgun';
import { familyPreset } from './family-preset';

/**
 * Mailgun webhooks (contract §10.1 D): the body's signature covers its timestamp and token only,
 * so the token is claimed once (Mailgun's advice): a captured triple cannot carry other event data.
 */
export const mailgun = familyPreset({
  name: 'mailgun',
  title: 'Mailgun',
  verifies: 'body signature.signature = hex HMAC-SHA256(timestamp + token) with the webhook signing key; timestamp within the tolerance; token accepted once',
  deliveryIdSource: 'body event-data.id (unsigned: the token is claimed once beside it)',
  facts: FAMILY_FACTS.mailgun,
  signedId: false,
  fallbackKind: 'unknown',
  parsesBeforeVerifying: true,
  verifyFamily: (request) =>
    verifyMailgun({ raw: request.raw, secrets: request.secrets, toleranceSeconds: request.toleranceSeconds, nowSeconds: request.nowSeconds }),
});
