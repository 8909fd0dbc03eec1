import type { z } from 'zod';
import { ChatPayloadError, emptyMapping, firstProblem, type ChatEventDraft, type ChatMapping } from '../chat-event';
import {
  inlineKeyboardButtonSchema,
  inlineKeyboardSchema,
  telegramCallbackQuerySchema,
  telegramMessageSchema,
  telegramUpdateSchema,
  type TelegramCallbackQuery,
  type TelegramMessage,
  type TelegramUser,
} from './payload';

export interface TelegramChannelRef {
  channelId: string;
  workspaceId: string;
  inboxId: string;
}

type JsonObject = Record<string, unknown>;

/** Update kinds that become chat events; every other kind is acknowledged and counted. */
const MESSAGE_KINDS = ['message', 'edited_message'] as const;
const TAP_KIND = 'callback_query';

/** Message fields mapped to `data` fields, so left out of contentAttributes. */
const ENVELOPE_KEYS = new Set(['message_id', 'from', 'chat', 'date', 'text', 'caption', 'reply_to_message']);

/** Files, sent by reference (`file_id`; the inbox fetches them with getFile). */
const FILE_KINDS = ['photo', 'document', 'voice', 'audio', 'video', 'video_note', 'animation', 'sticker'] as const;
/** What a message is, in this order of precedence; the first one present names contentType. */
const CONTENT_KINDS = [...FILE_KINDS, 'location', 'venue', 'contact', 'poll', 'dice'] as const;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function numberOrNull(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/** Telegram dates are unix seconds; anything else maps to null, never to "now". */
function unixSecondsToIso(value: unknown): string | null {
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0 || value > 1e11) return null;
  return new Date(value * 1000).toISOString();
}

/** contract §11: `{ id, phone: null, name, username }`. */
function contactOf(user: TelegramUser | undefined) {
  if (!user) return { id: null, phone: null, name: null, username: null };
  const name = [user.first_name, user.last_name].filter((part) => typeof part === 'string' && part.length > 0).join(' ');
  return { id: String(user.id), phone: null, name: name || null, username: user.username ?? null };
}

function common(channel: TelegramChannelRef, messageId: string, user: TelegramUser | undefined, timestamp: string | null) {
  return {
    workspaceId: channel.workspaceId,
    inboxId: channel.inboxId,
    channelId: channel.channelId,
    provider: 'telegram',
    messageId,
    contact: contactOf(user),
    timestamp,
  };
}

/** A photo comes in several sizes; the largest is the one worth keeping. */
function largestPhoto(sizes: unknown): JsonObject | null {
  if (!Array.isArray(sizes)) return null;
  let best: JsonObject | null = null;
  let bestArea = -1;
  for (const size of sizes) {
    if (!isObject(size) || typeof size.file_id !== 'string') continue;
    const area = (numberOrNull(size.width) ?? 0) * (numberOrNull(size.height) ?? 0);
    if (area >= bestArea) [best, bestArea] = [size, area];
  }
  return best;
}

function attachmentOf(kind: (typeof FILE_KINDS)[number], value: unknown): JsonObject | null {
  const file = kind === 'photo' ? largestPhoto(value) : isObject(value) ? value : null;
  if (!file || typeof file.file_id !== 'string') return null;
  return {
    type: 'file_id',
    data: file.file_id,
    mime: stringOrNull(file.mime_type) ?? (kind === 'photo' ? 'image/jpeg' : null),
    kind,
    name: stringOrNull(file.file_name),
    size: numberOrNull(file.file_size),
  };
}

function mapMessage(
  updateId: number,
  kind: (typeof MESSAGE_KINDS)[number],
  message: TelegramMessage,
  channel: TelegramChannelRef,
): ChatEventDraft {
  const attributes: JsonObject = {};
  for (const [key, value] of Object.entries(message)) {
    if (!ENVELOPE_KEYS.has(key) && !(FILE_KINDS as readonly string[]).includes(key)) attributes[key] = value;
  }
  const attachments = FILE_KINDS.flatMap((fileKind) => {
    const attachment = fileKind in message ? attachmentOf(fileKind, message[fileKind]) : null;
    return attachment ? [attachment] : [];
  });
  if (attachments.length > 0) attributes.attachments = attachments;
  if (kind === 'edited_message') attributes.edited = true;

  const contentType = message.text !== undefined ? 'text' : (CONTENT_KINDS.find((key) => key in message) ?? 'unknown');
  return {
    type: 'chat.message',
    subject: String(message.chat.id),
    dedupeKey: String(updateId),
    data: {
      ...common(channel, String(message.message_id), message.from, unixSecondsToIso(message.edit_date ?? message.date)),
      replyTo: message.reply_to_message ? String(message.reply_to_message.message_id) : null,
      message: { content: message.text ?? message.caption ?? null, contentType, contentAttributes: attributes },
    },
  };
}

/** The button of the message's inline keyboard that sends this callback data, if it can be found. */
function tappedButton(message: unknown, data: string | undefined): JsonObject | null {
  if (data === undefined || !isObject(message)) return null;
  const markup = inlineKeyboardSchema.safeParse(message.reply_markup);
  if (!markup.success) return null;
  for (const row of markup.data.inline_keyboard) {
    for (const candidate of row) {
      const button = inlineKeyboardButtonSchema.safeParse(candidate);
      if (button.success && button.data.callback_data === data) return button.data;
    }
  }
  return null;
}

function mapTap(updateId: number, query: TelegramCallbackQuery, channel: TelegramChannelRef): ChatEventDraft {
  const { from: _from, message, ...callbackQuery } = query;
  const button = tappedButton(message, query.data);
  return {
    type: 'chat.tap',
    // A tap on a message sent in inline mode has no chat the bot is in: the user is the conversation.
    subject: String(message ? message.chat.id : query.from.id),
    dedupeKey: String(updateId),
    data: {
      ...common(channel, query.id, query.from, null),
      replyTo: message ? String(message.message_id) : (query.inline_message_id ?? null),
      message: {
        content: stringOrNull(button?.text),
        contentType: TAP_KIND,
        contentAttributes: { callback_query: callbackQuery, button },
      },
      value: query.data ?? null,
    },
  };
}

function readItem<T>(schema: z.ZodType<T>, value: unknown, key: string, mapping: ChatMapping): T | undefined {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const { path, problem } = firstProblem(parsed.error.issues);
  mapping.invalid.push({ path: [key, ...path], problem });
  return undefined;
}

/**
 * Maps one Telegram update to at most one chat event. Pure: no I/O, clock or randomness.
 * Throws ChatPayloadError when the body is not an update (no update_id); a message or
 * callback_query that cannot be read is listed in `invalid`; any other update kind
 * (channel_post, poll, my_chat_member…) is counted in `ignored`.
 */
export function mapTelegramUpdate(payload: unknown, channel: TelegramChannelRef): ChatMapping {
  const parsed = telegramUpdateSchema.safeParse(payload);
  if (!parsed.success) throw new ChatPayloadError('invalid Telegram update', parsed.error.issues);
  const update = parsed.data;
  const mapping = emptyMapping();

  const messageKind = MESSAGE_KINDS.find((kind) => kind in update);
  if (messageKind) {
    const message = readItem(telegramMessageSchema, update[messageKind], messageKind, mapping);
    if (message) mapping.events.push(mapMessage(update.update_id, messageKind, message, channel));
  } else if (TAP_KIND in update) {
    const query = readItem(telegramCallbackQuerySchema, update[TAP_KIND], TAP_KIND, mapping);
    if (query) mapping.events.push(mapTap(update.update_id, query, channel));
  } else {
    mapping.ignored += 1;
  }
  return mapping;
}
