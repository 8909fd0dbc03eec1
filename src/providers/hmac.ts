import { z } from 'zod';
import type { Provider } from './provider';
import { recipeParts } from './recipe/recipe-provider';
import type { Recipe } from './recipe/schema';

const headerName = z.string().regex(/^[A-Za-z0-9-]{1,64}$/, 'a header name').transform((name) => name.toLowerCase());

export const hmacOptionsSchema = z
  .strictObject({
    header: headerName,
    algorithm: z.enum(['sha1', 'sha256', 'sha512']),
    encoding: z.enum(['hex', 'base64']),
    prefix: z.string().max(64).optional(),
    timestampHeader: headerName.optional(),
    signedContent: z.string().min(1).max(256).optional(),
  })
  .refine((o) => !o.signedContent || o.signedContent.split('{body}').length === 2, {
    message: 'signedContent must contain {body} exactly once',
    path: ['signedContent'],
  })
  .refine((o) => !o.signedContent?.includes('{timestamp}') || o.timestampHeader !== undefined, {
    message: 'signedContent uses {timestamp}: timestampHeader is required',
    path: ['timestampHeader'],
  })
  // Contract §10, timestamps come from signed material only: a timestamp header outside the MAC
  // can be refreshed on a captured delivery, so checking it against the tolerance proves nothing.
  .refine((o) => o.timestampHeader === undefined || o.signedContent?.includes('{timestamp}') === true, {
    message: 'timestampHeader is only checked when signed: signedContent must contain {timestamp}',
    path: ['signedContent'],
  });

type HmacOptions = z.infer<typeof hmacOptionsSchema>;

/**
 * The recipe the `hmac` options denote (contract §10.1 H: one engine, two spellings). Every
 * `{timestamp}` of the older template is the one signed timestamp; the recipe engine writes it
 * wherever the template has it.
 */
export function hmacRecipe(options: Record<string, unknown>): Recipe {
  const o = options as HmacOptions;
  return {
    signature: { header: o.header, format: 'raw', encoding: o.encoding, ...(o.prefix && { prefix: o.prefix }) },
    ...(o.timestampHeader && { timestamp: { header: o.timestampHeader, unit: 's' as const } }),
    algorithm: `hmac-${o.algorithm}`,
    signedContent: o.signedContent ?? '{body}',
    kind: [{ body: '/type' }, { body: '/event' }],
  };
}

export const hmac: Provider = {
  name: 'hmac',
  title: 'Generic HMAC (any sender that signs the body with a shared secret)',
  verifies: 'options.header: [prefix]<hex|base64 HMAC-(sha1|sha256|sha512) of signedContent> where signedContent is a template over {timestamp} (options.timestampHeader, unix seconds, within toleranceSeconds both ways) and {body} (the raw bytes); default {body}. Read as the recipe it denotes (name "recipe")',
  deliveryIdSource: 'none: idempotency.keyField (in the signed body), else the body fingerprint; an unsigned Idempotency-Key is not used',
  family: 'hmac-recipe',
  optionsSchema: hmacOptionsSchema as unknown as z.ZodType<Record<string, unknown>>,
  ...recipeParts(hmacRecipe),
};
