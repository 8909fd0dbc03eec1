import { z } from 'zod';
import { FAMILY_FACTS } from './families/facts';
import { GOOGLE_CERTS_URL, verifyGooglePubsub } from './families/google-pubsub';
import type { JSONWebKeySet } from 'jose';
import { bearerPresent, familyPreset } from './family-preset';

const rsaJwk = z.looseObject({
  kty: z.literal('RSA'),
  kid: z.string().min(1).max(256),
  n: z.string().min(1).max(2048),
  e: z.string().min(1).max(16),
});

export const googlePubsubOptions = z.strictObject({
  /** Default: the trigger's public URL as called (set PUBLIC_BASE_URL so that it is the one the subscription names). */
  audience: z.string().min(1).max(2048).optional(),
  serviceAccountEmails: z.array(z.email().max(256)).min(1).max(10),
  jwks: z.strictObject({ keys: z.array(rsaJwk).min(1).max(20) }).optional(),
  jwksUrl: z.literal(GOOGLE_CERTS_URL, { message: `only Google's own key set: ${GOOGLE_CERTS_URL}` }).optional(),
  kindAttribute: z.string().min(1).max(256).optional(),
});

type Options = z.infer<typeof googlePubsubOptions>;

/**
 * Google Cloud Pub/Sub push with an OIDC token (contract §10.1 D): authenticates the sender
 * (a listed service account), not the body. Keys pinned in `jwks`, else Google's.
 */
export const googlePubsub = familyPreset({
  name: 'google-pubsub',
  title: 'Google Cloud Pub/Sub (push)',
  verifies: "Authorization: Bearer OIDC token, RS256 by kid from options.jwks or www.googleapis.com/oauth2/v3/certs; iss Google, aud options.audience (default the trigger's URL), email one of options.serviceAccountEmails",
  deliveryIdSource: 'body message.messageId (the body is not signed: backed by the body claim)',
  facts: FAMILY_FACTS['google-pubsub'],
  signedId: false,
  signatureHeaders: ['authorization'],
  optionsSchema: googlePubsubOptions as unknown as z.ZodType<Record<string, unknown>>,
  fallbackKind: 'message',
  // Without options.audience the token's aud must be the trigger's public URL, which only PUBLIC_BASE_URL fixes (a Host header is the sender's).
  signsUrl: (options) => options.audience === undefined,
  precheck: bearerPresent,
  verifyFamily: (request, keys) => {
    const options = request.options as Options;
    return verifyGooglePubsub({
      authorization: request.headers.authorization,
      raw: request.raw,
      options: {
        audience: options.audience ?? request.url,
        serviceAccountEmails: options.serviceAccountEmails,
        ...(options.jwks && { jwks: options.jwks as JSONWebKeySet }),
        ...(options.kindAttribute && { kindAttribute: options.kindAttribute }),
      },
      toleranceSeconds: request.toleranceSeconds,
      nowSeconds: request.nowSeconds,
      keys,
    });
  },
});
