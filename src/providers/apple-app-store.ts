import { z } from 'zod';
import { verifyAppleAppStore } from './families/apple-app-store';
import { FAMILY_FACTS } from './families/facts';
import { familyPreset } from './family-preset';

export const appleAppStoreOptions = z.strictObject({
  bundleId: z.string().regex(/^[A-Za-z0-9.-]{1,155}$/, "the app's bundle id (com.example.app)"),
  environment: z.enum(['Production', 'Sandbox']).default('Production'),
});

type Options = z.infer<typeof appleAppStoreOptions>;

/**
 * Apple App Store Server Notifications v2 (contract §10.1 D): `signedPayload`, an ES256 JWS whose
 * x5c chains to Apple Root CA - G3 pinned in the gateway (nothing fetched); bundle and environment
 * the trigger's.
 */
export const appleAppStore = familyPreset({
  name: 'apple-app-store',
  title: 'Apple App Store Server Notifications (v2)',
  verifies: "body signedPayload: ES256 JWS, x5c leaf and intermediate chained to Apple Root CA - G3 (pinned in the gateway) with Apple's certificate marks; bundleId options.bundleId, environment options.environment",
  deliveryIdSource: 'signed payload notificationUUID',
  facts: FAMILY_FACTS['apple-app-store'],
  signedId: true,
  optionsSchema: appleAppStoreOptions as unknown as z.ZodType<Record<string, unknown>>,
  fallbackKind: 'notification',
  parsesBeforeVerifying: true,
  verifyFamily: (request, keys) => {
    const options = request.options as Options;
    const anchors = keys.trustAnchors.appleAppStore;
    return verifyAppleAppStore({
      raw: request.raw,
      options: { bundleId: options.bundleId, environment: options.environment },
      // 0: the trigger set none, and Apple's retries keep signedDate (dedupe is the defence, §10.H).
      ...(request.toleranceSeconds > 0 && { toleranceSeconds: request.toleranceSeconds }),
      nowSeconds: request.nowSeconds,
      ...(anchors && { trustAnchors: anchors }),
    });
  },
});
