import { z } from 'zod';

/*
 * The WhatsApp Cloud API webhook body, validated only as far as the mapper relies on it.
 * Every object is loose: Meta adds fields often (BSUIDs arrived in 2026) and the mapper
 * forwards what it does not understand instead of dropping it.
 */

const timestamp = z.union([z.string(), z.number()]);

export const whatsAppContactSchema = z.looseObject({
  wa_id: z.string().optional(),
  // Business-scoped user id (BSUID); the only identifier of a user who adopted a username.
  user_id: z.string().optional(),
  profile: z.looseObject({ name: z.string().optional() }).optional(),
});

export const whatsAppMessageSchema = z
  .looseObject({
    id: z.string().min(1),
    from: z.string().optional(),
    from_user_id: z.string().optional(),
    timestamp: timestamp.optional(),
    type: z.string().optional(),
    context: z.looseObject({ id: z.string().optional() }).optional(),
  })
  .refine((message) => Boolean(message.from || message.from_user_id), {
    message: 'a message needs `from` or `from_user_id`',
    path: ['from'],
  });

export const whatsAppStatusSchema = z
  .looseObject({
    id: z.string().min(1),
    status: z.string().min(1),
    timestamp: timestamp.optional(),
    recipient_id: z.string().optional(),
    recipient_user_id: z.string().optional(),
    errors: z.array(z.looseObject({})).optional(),
  })
  .refine((status) => Boolean(status.recipient_id || status.recipient_user_id), {
    message: 'a status needs `recipient_id` or `recipient_user_id`',
    path: ['recipient_id'],
  });

/** Metadata of a change that carries chat data: whose number it is for. */
export const whatsAppMetadataSchema = z.looseObject({ phone_number_id: z.string().min(1) });

/*
 * The envelope is checked as a whole (a body that is not a WhatsApp webhook is a 400); the
 * items inside it (messages, statuses, contacts, metadata) one by one, so that one unreadable
 * item is skipped and counted instead of failing the events around it.
 */
export const whatsAppChangeValueSchema = z.looseObject({
  messaging_product: z.string().optional(),
  // Absent on changes of other webhook fields (templates, account alerts…), which carry no chat data.
  metadata: z.unknown().optional(),
  contacts: z.array(z.unknown()).optional(),
  messages: z.array(z.unknown()).optional(),
  statuses: z.array(z.unknown()).optional(),
});

export const whatsAppPayloadSchema = z.looseObject({
  object: z.literal('whatsapp_business_account'),
  entry: z.array(
    z.looseObject({
      id: z.string().optional(),
      changes: z.array(
        z.looseObject({ field: z.string().optional(), value: whatsAppChangeValueSchema }),
      ),
    }),
  ),
});

export type WhatsAppPayload = z.infer<typeof whatsAppPayloadSchema>;
export type WhatsAppContact = z.infer<typeof whatsAppContactSchema>;
export type WhatsAppMessage = z.infer<typeof whatsAppMessageSchema>;
export type WhatsAppStatus = z.infer<typeof whatsAppStatusSchema>;
