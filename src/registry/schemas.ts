import { z } from 'zod';

export const PATH_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;
export const FIELD_TYPES = ['string', 'number', 'boolean', 'object', 'array', 'file[]'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

const id = z.string().min(1).max(200);
const headerName = z
  .string()
  .regex(/^[A-Za-z0-9-]{1,64}$/, 'a header name: letters, digits and dashes')
  .transform((name) => name.toLowerCase());

/** What the admin API accepts for PUT /admin/triggers/{path}. Unknown keys are refused. */
export const triggerInputSchema = z.strictObject({
  workflowId: id,
  workspaceId: id,
  deployed: z.boolean(),
  auth: z.strictObject({ token: z.string().min(8).max(512), header: headerName.optional() }).optional(),
  inputFormat: z
    .array(z.strictObject({ name: z.string().min(1).max(128), type: z.enum(FIELD_TYPES) }))
    .max(200)
    .optional(),
  response: z.strictObject({ status: z.number().int().min(200).max(299), body: z.json() }).optional(),
  rateLimit: z
    .strictObject({ limit: z.number().int().min(1).max(1_000_000), windowSeconds: z.number().int().min(1).max(86_400) })
    .optional(),
  idempotency: z
    .strictObject({
      keyField: z.string().min(1).max(256).optional(),
      ttlSeconds: z.number().int().min(1).max(7 * 86_400).optional(),
      fingerprintTtlSeconds: z.number().int().min(1).max(7 * 86_400).optional(),
    })
    .optional(),
});
export type TriggerInput = z.infer<typeof triggerInputSchema>;

/** A trigger as the registry keeps it: the token only as its SHA-256. */
export interface StoredTrigger extends Omit<TriggerInput, 'auth'> {
  auth?: { tokenHash: string; header?: string };
  updatedAt: string;
}

export const channelInputSchema = z.strictObject({
  provider: z.literal('whatsapp'),
  workspaceId: id,
  inboxId: id,
  phoneNumberId: z.string().regex(/^[0-9]{1,32}$/, 'digits only'),
  verifyToken: z.string().min(1).max(512),
  appSecret: z.string().min(1).max(512),
});
export type ChannelInput = z.infer<typeof channelInputSchema>;

/** The app secret must stay usable for HMAC checks, so it is kept; it is never returned. */
export interface StoredChannel extends Omit<ChannelInput, 'verifyToken'> {
  verifyTokenHash: string;
  updatedAt: string;
}

export const CHANNEL_ID_PATTERN = PATH_PATTERN;
