import type { JSONWebKeySet } from 'jose';
import { z } from 'zod';
import { FAMILY_FACTS } from './families/facts';
import { verifyZohoDesk } from './families/zoho-desk';
import { familyPreset } from './family-preset';
import { pinnedJwks } from './jwks-option';

export const zohoDeskOptions = z.strictObject({
  orgId: z.string().regex(/^[0-9]{1,32}$/, 'the Zoho Desk organization id (digits)'),
  webhookId: z.string().regex(/^[0-9]{1,32}$/, "the webhook's id (digits)"),
  /** The organization's data centre: its /.well-known/jwks.json is the only key set fetched. */
  deskHost: z.enum(['desk.zoho.com', 'desk.zoho.eu', 'desk.zoho.in', 'desk.zoho.com.au', 'desk.zoho.jp', 'desk.zoho.com.cn']).default('desk.zoho.com'),
  jwks: pinnedJwks.optional(),
});

type Options = z.infer<typeof zohoDeskOptions>;

/** Zoho Desk webhooks (contract §10.1 D, sender only): X-ZDesk-JWT, RS256 from the data centre's JWKS. */
export const zohoDesk = familyPreset({
  name: 'zoho-desk',
  title: 'Zoho Desk',
  verifies: 'X-ZDesk-JWT: RS256 by kid from options.jwks or https://<options.deskHost>/.well-known/jwks.json; exp required; iss orgId:<options.orgId>, aud webhookId:<options.webhookId>',
  deliveryIdSource: 'none signed: the body claim (same body within the window is a replay)',
  facts: FAMILY_FACTS['zoho-desk'],
  signedId: false,
  signatureHeaders: ['x-zdesk-jwt'],
  optionsSchema: zohoDeskOptions as unknown as z.ZodType<Record<string, unknown>>,
  fallbackKind: 'event',
  precheck: (head) => (typeof head.headers['x-zdesk-jwt'] === 'string' && head.headers['x-zdesk-jwt'].trim().length > 0 ? undefined : 'signature_missing'),
  verifyFamily: (request, keys) => {
    const options = request.options as Options;
    return verifyZohoDesk({
      token: request.headers['x-zdesk-jwt'] as string | undefined,
      raw: request.raw,
      options: { orgId: options.orgId, webhookId: options.webhookId, deskHost: options.deskHost, ...(options.jwks && { jwks: options.jwks as JSONWebKeySet }) },
      toleranceSeconds: request.toleranceSeconds,
      nowSeconds: request.nowSeconds,
      keys,
    });
  },
});
