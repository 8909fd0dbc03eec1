import type { JSONWebKeySet } from 'jose';
import { z } from 'zod';
import { BOT_FRAMEWORK_KEYS_URL, verifyBotFramework } from './families/bot-framework';
import { FAMILY_FACTS } from './families/facts';
import { bearerPresent, familyPreset } from './family-preset';
import { fixedJwksUrl, pinnedJwks } from './jwks-option';

export const botFrameworkOptions = z.strictObject({
  appId: z.string().regex(/^[A-Za-z0-9-]{1,64}$/, "the bot's Microsoft App ID"),
  jwks: pinnedJwks.optional(),
  jwksUrl: fixedJwksUrl(BOT_FRAMEWORK_KEYS_URL, 'Bot Framework').optional(),
});

type Options = z.infer<typeof botFrameworkOptions>;

/** Bot Framework activities from the Bot Connector (contract §10.1 D, sender only). */
export const botFramework = familyPreset({
  name: 'bot-framework',
  title: 'Microsoft Bot Framework (Bot Connector)',
  verifies: 'Authorization: Bearer RS256 by kid from options.jwks or login.botframework.com/v1/.well-known/keys, the key endorsing the activity channelId; iss https://api.botframework.com, aud options.appId, serviceUrl the activity\'s; exp',
  deliveryIdSource: 'body activity id (the body is not signed: backed by the body claim)',
  facts: FAMILY_FACTS['bot-framework'],
  signedId: false,
  signatureHeaders: ['authorization'],
  optionsSchema: botFrameworkOptions as unknown as z.ZodType<Record<string, unknown>>,
  fallbackKind: 'activity',
  precheck: bearerPresent,
  parsesBeforeVerifying: true,
  verifyFamily: (request, keys) => {
    const options = request.options as Options;
    return verifyBotFramework({
      authorization: request.headers.authorization as string | undefined,
      raw: request.raw,
      options: { appId: options.appId, ...(options.jwks && { jwks: options.jwks as JSONWebKeySet }) },
      toleranceSeconds: request.toleranceSeconds,
      nowSeconds: request.nowSeconds,
      keys,
    });
  },
});
