import { z } from 'zod';
import { channelBase, type ChannelApi, type ChannelRecord } from '../channel-record';
import { META_SIGNATURE_HEADER, SAFE_CHALLENGE } from './wire';

/** A WhatsApp channel as PUT /admin/channels/{id} takes it (contract §3). */
export const whatsAppChannelInputSchema = z.strictObject({
  provider: z.literal('whatsapp'),
  ...channelBase,
  phoneNumberId: z.string().regex(/^[0-9]{1,32}$/, 'digits only'),
  verifyToken: z.string().min(1).max(512),
  appSecret: z.string().min(1).max(512),
});
export type WhatsAppChannelInput = z.infer<typeof whatsAppChannelInputSchema>;

/** The app secret must stay usable for HMAC checks, so it is kept (sealed); the verify token only as its hash. */
export interface WhatsAppChannel extends Omit<WhatsAppChannelInput, 'verifyToken'> {
  registrationId?: string;
  verifyTokenHash: string;
  updatedAt: string;
}

declare module '../channel-record' {
  interface ChannelTypes {
    whatsapp: { input: WhatsAppChannelInput; stored: WhatsAppChannel };
  }
}

export const whatsAppRecord: ChannelRecord = {
  input: whatsAppChannelInputSchema,
  secrets: { verifyToken: 'hashed', appSecret: 'sealed' },
};

export const whatsAppApi: ChannelApi = {
  title: 'WhatsApp',
  security: {
    scheme: 'whatsappSignature',
    header: META_SIGNATURE_HEADER,
    description: "sha256=<hex HMAC-SHA256 of the raw body, key = the channel's appSecret>",
  },
  get: {
    summary: "Meta's subscription handshake for a WhatsApp channel",
    query: [
      { name: 'hub.mode', description: '`subscribe`', schema: { type: 'string', const: 'subscribe' } },
      { name: 'hub.verify_token', description: "the channel's verifyToken" },
      { name: 'hub.challenge', description: 'echoed when the token matches; 1-256 of [A-Za-z0-9_.-]', schema: { type: 'string', pattern: SAFE_CHALLENGE.source } },
    ],
  },
  post: {
    summary: 'A WhatsApp Cloud API webhook delivery: every message and status becomes a chat event',
    content: {
      'application/json': {
        schema: {
          type: 'object',
          description: 'the WhatsApp Business Account webhook payload',
          required: ['entry'],
          properties: { object: { type: 'string', examples: ['whatsapp_business_account'] }, entry: { type: 'array', items: { type: 'object' } } },
        },
      },
    },
  },
};
