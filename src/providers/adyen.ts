import { verifyAdyen } from './families/adyen';
import { FAMILY_FACTS } from './families/facts';
import { hexKey } from './families/fields-hmac';
import { familyPreset } from './family-preset';

/**
 * Adyen standard notifications (contract §10.1 D): the body (already within MAX_BODY_BYTES) is
 * parsed before verifying, the one family that must; each item's HMAC covers eight fields, only
 * those are authenticated. Acknowledged 200 `[accepted]`.
 */
export const adyen = familyPreset({
  name: 'adyen',
  title: 'Adyen (standard notifications)',
  verifies: 'each NotificationRequestItem: additionalData.hmacSignature = base64 HMAC-SHA256 (hex key) of pspReference:originalReference:merchantAccountCode:merchantReference:amount.value:amount.currency:eventCode:success',
  deliveryIdSource: 'pspReference:eventCode of the item (signed fields); several items: one id derived from all',
  facts: FAMILY_FACTS.adyen,
  signedId: true,
  fallbackKind: 'notification',
  acknowledgement: 'accepted-text',
  secretProblem: (secret) => (hexKey(secret) ? undefined : 'an Adyen HMAC key is hex, as the Customer Area shows it'),
  parsesBeforeVerifying: true,
  verifyFamily: (request) => verifyAdyen({ raw: request.raw, secrets: request.secrets }),
});
