import { FAMILY_FACTS } from './families/facts';
import { verifyVonage, vonagePrecheck } from './families/vonage';
import { familyPreset } from './family-preset';

/** Vonage signed webhooks (contract §10.1 D): a bearer JWT, HS256 only, over the body's SHA-256. */
export const vonage = familyPreset({
  name: 'vonage',
  title: 'Vonage (Messages API)',
  verifies: 'Authorization: Bearer JWT, HS256 with the signature secret only; payload_hash = SHA-256 hex of the body; iat within the tolerance',
  deliveryIdSource: 'body message_uuid[:status] (the body is signed through payload_hash)',
  facts: FAMILY_FACTS.vonage,
  signedId: true,
  signatureHeaders: ['authorization'],
  fallbackKind: 'message.inbound',
  precheck: (head) => vonagePrecheck(typeof head.headers.authorization === 'string' ? head.headers.authorization : undefined),
  verifyFamily: (request) =>
    verifyVonage({
      authorization: request.headers.authorization,
      raw: request.raw,
      secrets: request.secrets,
      toleranceSeconds: request.toleranceSeconds,
      nowSeconds: request.nowSeconds,
    }),
});
