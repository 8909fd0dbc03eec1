import { z } from 'zod';
import { schemaProblem, type JsonSchema } from '../json-schema/compile';
import type { ChannelInput } from '../providers/channel-record';
import { CHAT_SENDERS } from '../providers/channels';
import { providerInputSchema, type StoredProvider } from '../providers/trigger-field';
import { isCredentialName } from '../secrets/names';
import { refuseReservedTokenHeader } from './token-header';

export const PATH_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;
export const FIELD_TYPES = ['string', 'number', 'boolean', 'object', 'array', 'file[]'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

const id = z.string().min(1).max(200);
/** A header name as the operator wrote it (shown back so); HTTP compares header names in any case. */
const headerNameAsWritten = z.string().regex(/^[A-Za-z0-9-]{1,64}$/, 'a header name: letters, digits and dashes');
const headerName = headerNameAsWritten.transform((name) => name.toLowerCase());
/** A header a trigger may publish: never one whose name looks like a credential (those are withheld). */
const publishableHeaderName = headerName.refine((name) => !isCredentialName(name), {
  error: 'looks like a credential or signature header; those are never published',
});

const jsonSchema: z.ZodType<JsonSchema> = z
  .union([z.boolean(), z.record(z.string(), z.unknown())])
  .superRefine((value, ctx) => {
    const problem = schemaProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

/** What the admin API accepts for PUT /admin/triggers/{path}. Unknown keys are refused. */
export const triggerInputSchema = z.strictObject({
  workflowId: id,
  workspaceId: id,
  deployed: z.boolean(),
  auth: z.strictObject({ token: z.string().min(1).max(512), header: headerNameAsWritten.superRefine(refuseReservedTokenHeader).optional() }).optional(),
  /** Only these request headers are published (lower-cased); absent = every header that is not a credential. */
  publishHeaders: z.array(publishableHeaderName).max(100).optional(),
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
  provider: providerInputSchema.optional(),
  /** Contract §13: a JSON Schema (draft 2020-12, at most 64 KiB) that `input` must satisfy. */
  schema: jsonSchema.optional(),
});
export type TriggerInput = z.infer<typeof triggerInputSchema>;

/** A trigger as the registry keeps it: the token only as its SHA-256. */
export interface StoredTrigger extends Omit<TriggerInput, 'auth' | 'provider'> {
  /** This registration's id (registration.ts); absent on records stored before they had one. */
  registrationId?: string;
  auth?: { tokenHash: string; header?: string };
  provider?: StoredProvider;
  updatedAt: string;
}

/**
 * What the admin API and TRIGGERS_FILE accept for a channel, by `provider`: the record of each
 * channel module (its `chat.record`). Unknown keys are refused.
 */
export const channelInputSchema = z.discriminatedUnion(
  'provider',
  CHAT_SENDERS.map((sender) => sender.chat.record.input) as unknown as [z.ZodObject, ...z.ZodObject[]],
) as unknown as z.ZodType<ChannelInput>;

export type { ChannelInput, StoredChannel } from '../providers/channel-record';
// Each channel's own types, where they are defined (existing imports keep working).
export type { WhatsAppChannel, WhatsAppChannelInput } from '../providers/meta/channel';
export type { TwilioChannel, TwilioChannelInput } from '../providers/twilio/channel';
export type { TelegramChannel, TelegramChannelInput } from '../providers/telegram/channel';

export const CHANNEL_ID_PATTERN = PATH_PATTERN;
