import { z } from 'zod';

/*
 * Telegram Bot API `Update` (https://core.telegram.org/bots/api#update), validated only as far
 * as the mapper relies on it. Objects are loose: Telegram adds fields with every API version,
 * and the mapper forwards what it does not map instead of dropping it.
 */

const chatId = z.union([z.number().int(), z.string().regex(/^-?\d{1,20}$/)]);

export const telegramUserSchema = z.looseObject({
  id: chatId,
  first_name: z.string().optional(),
  last_name: z.string().optional(),
  username: z.string().optional(),
});

export const telegramChatSchema = z.looseObject({ id: chatId, type: z.string().optional() });

/** Message, also the one a callback_query's keyboard was attached to. */
export const telegramMessageSchema = z.looseObject({
  message_id: z.number().int(),
  date: z.number().int().optional(),
  chat: telegramChatSchema,
  from: telegramUserSchema.optional(),
  edit_date: z.number().int().optional(),
  text: z.string().optional(),
  caption: z.string().optional(),
  reply_to_message: z.looseObject({ message_id: z.number().int() }).optional(),
});

export const inlineKeyboardButtonSchema = z.looseObject({
  text: z.string(),
  callback_data: z.string().optional(),
});

/** A keyboard that cannot be read only costs the tapped button's text, so it is parsed apart. */
export const inlineKeyboardSchema = z.looseObject({
  inline_keyboard: z.array(z.array(z.unknown())),
});

export const telegramCallbackQuerySchema = z.looseObject({
  id: z.string().min(1),
  from: telegramUserSchema,
  // A message the bot sent; `date: 0` marks one that is no longer accessible (no keyboard).
  message: z.looseObject({ message_id: z.number().int(), chat: telegramChatSchema }).optional(),
  inline_message_id: z.string().optional(),
  chat_instance: z.string().optional(),
  data: z.string().optional(),
  game_short_name: z.string().optional(),
});

/** The envelope: one update, identified by its update_id (the dedupe key). */
export const telegramUpdateSchema = z.looseObject({
  update_id: z.number().int().nonnegative(),
});

export type TelegramUser = z.infer<typeof telegramUserSchema>;
export type TelegramMessage = z.infer<typeof telegramMessageSchema>;
export type TelegramCallbackQuery = z.infer<typeof telegramCallbackQuerySchema>;
