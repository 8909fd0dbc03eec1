import { z } from 'zod';
import { channelBase, type ChannelApi, type ChannelRecord } from '../channel-record';
import { SECRET_TOKEN_PATTERN, TELEGRAM_TOKEN_HEADER } from './secret-token';

/** A Telegram channel as PUT /admin/channels/{id} takes it (contract §11). */
export const telegramChannelInputSchema = z.strictObject({
  provider: z.literal('telegram'),
  ...channelBase,
  botId: z.string().regex(/^[0-9]{1,20}$/, 'the bot\'s numeric id, digits only').optional(),
  // What Telegram's setWebhook accepts, as the `telegram` trigger preset does: one sender, one
  // behaviour. Guessing is bounded by the failed-authentication throttle.
  secretToken: z.string().regex(SECRET_TOKEN_PATTERN, '1-256 of A-Z a-z 0-9 _ -'),
});
export type TelegramChannelInput = z.infer<typeof telegramChannelInputSchema>;

/** Telegram sends the secret itself; it is kept (sealed), compared in constant time and never returned. */
export interface TelegramChannel extends TelegramChannelInput {
  registrationId?: string;
  updatedAt: string;
}

declare module '../channel-record' {
  interface ChannelTypes {
    telegram: { input: TelegramChannelInput; stored: TelegramChannel };
  }
}

export const telegramRecord: ChannelRecord = { input: telegramChannelInputSchema, secrets: { secretToken: 'sealed' } };

export const telegramApi: ChannelApi = {
  title: 'Telegram',
  security: { scheme: 'telegramSecretToken', header: TELEGRAM_TOKEN_HEADER, description: "the channel's secretToken, as given to setWebhook" },
  post: {
    summary: 'A Telegram Bot API update',
    content: {
      'application/json': {
        schema: { type: 'object', description: 'a Telegram Update', required: ['update_id'], properties: { update_id: { type: 'integer' } } },
      },
    },
  },
};
