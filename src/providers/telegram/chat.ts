import type { ChatSide } from '../provider';
import { telegramApi, telegramRecord } from './channel';
import { mapTelegramUpdate } from './map';

/** A Telegram bot as a chat channel (contract §11): same secret-token check as the `telegram` preset. */
export const telegramChat: ChatSide = {
  channel: 'telegram',
  dedupePrefix: 'tg',
  record: telegramRecord,
  api: telegramApi,
  describes: 'Telegram Bot API update',
  credentials(channel) {
    if (channel.provider !== 'telegram') throw new Error(`not a Telegram channel: ${channel.provider}`);
    return { secrets: [channel.secretToken], options: {}, ...(channel.botId !== undefined && { identity: channel.botId }) };
  },
  map: (payload, ref) => mapTelegramUpdate(payload, ref),
};
