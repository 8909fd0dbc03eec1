import type { JSONWebKeySet } from 'jose';
import { z } from 'zod';
import { FAMILY_FACTS } from './families/facts';
import { GOOGLE_CHAT_KEYS_URL, verifyGoogleChat } from './families/google-chat';
import { bearerPresent, familyPreset } from './family-preset';
import { fixedJwksUrl, pinnedJwks } from './jwks-option';

export const googleChatOptions = z.strictObject({
  projectNumber: z.string().regex(/^[0-9]{1,20}$/, "the Chat app's Google Cloud project number"),
  jwks: pinnedJwks.optional(),
  jwksUrl: fixedJwksUrl(GOOGLE_CHAT_KEYS_URL, 'chat@system.gserviceaccount.com').optional(),
});

type Options = z.infer<typeof googleChatOptions>;

/** Google Chat app events, audience "project number" (contract §10.1 D, sender only). */
export const googleChat = familyPreset({
  name: 'google-chat',
  title: 'Google Chat (app events)',
  verifies: 'Authorization: Bearer RS256 by kid from options.jwks or the JWKS of chat@system.gserviceaccount.com; iss chat@system.gserviceaccount.com, aud options.projectNumber; exp, iat',
  deliveryIdSource: 'none signed: the body claim (same body within the window is a replay)',
  facts: FAMILY_FACTS['google-chat'],
  signedId: false,
  signatureHeaders: ['authorization'],
  optionsSchema: googleChatOptions as unknown as z.ZodType<Record<string, unknown>>,
  fallbackKind: 'event',
  precheck: bearerPresent,
  verifyFamily: (request, keys) => {
    const options = request.options as Options;
    return verifyGoogleChat({
      authorization: request.headers.authorization as string | undefined,
      raw: request.raw,
      options: { projectNumber: options.projectNumber, ...(options.jwks && { jwks: options.jwks as JSONWebKeySet }) },
      toleranceSeconds: request.toleranceSeconds,
      nowSeconds: request.nowSeconds,
      keys,
    });
  },
});
