import { z } from 'zod';
import { channelBase, type ChannelApi, type ChannelRecord } from '../channel-record';
import { TWILIO_SIGNATURE_HEADER } from './signature';

/** A Twilio channel as PUT /admin/channels/{id} takes it (contract §11). */
export const twilioChannelInputSchema = z.strictObject({
  provider: z.literal('twilio'),
  ...channelBase,
  accountSid: z.string().regex(/^AC[0-9A-Za-z]{32}$/, 'a Twilio Account SID: AC and 32 letters or digits'),
  authToken: z.string().min(1).max(512),
});
export type TwilioChannelInput = z.infer<typeof twilioChannelInputSchema>;

/** The auth token keys Twilio's HMAC, so it is kept (sealed); it is never returned. */
export interface TwilioChannel extends TwilioChannelInput {
  registrationId?: string;
  updatedAt: string;
}

declare module '../channel-record' {
  interface ChannelTypes {
    twilio: { input: TwilioChannelInput; stored: TwilioChannel };
  }
}

export const twilioRecord: ChannelRecord = { input: twilioChannelInputSchema, secrets: { authToken: 'sealed' } };

export const twilioApi: ChannelApi = {
  title: 'Twilio',
  security: {
    scheme: 'twilioSignature',
    header: TWILIO_SIGNATURE_HEADER,
    description: "base64 HMAC-SHA1 with the channel's authToken over the URL and the sorted POST parameters",
  },
  post: {
    summary: 'A Twilio Messaging webhook or status callback (SMS and WhatsApp)',
    description: 'The signed URL is PUBLIC_BASE_URL (else the request origin) + path + query.',
    content: {
      'application/x-www-form-urlencoded': { schema: { type: 'object', additionalProperties: { type: 'string' } } },
      'application/json': { schema: { type: 'object', description: 'the JSON variant, signed through bodySHA256 in the URL' } },
    },
    parseReasons: ['too_many_fields', 'unsupported_media_type'],
  },
};
