import { z } from 'zod';
import {
  ChatPayloadError,
  digitsOnly,
  emptyMapping,
  firstProblem,
  type ChatEventDraft,
  type ChatMapping,
} from '../chat-event';
import { whatsappMessageKey, whatsappStatusKey } from './delivery-id';
import {
  whatsAppContactSchema,
  whatsAppMessageSchema,
  whatsAppMetadataSchema,
  whatsAppPayloadSchema,
  whatsAppStatusSchema,
  type WhatsAppContact,
  type WhatsAppMessage,
  type WhatsAppStatus,
} from './whatsapp-payload';

export interface ChatChannelRef {
  channelId: string;
  workspaceId: string;
  inboxId: string;
  phoneNumberId: string;
}

type JsonObject = Record<string, unknown>;
type ContactRef = { phone: string | null; name: string | null };
type Tap = { content: string | null; value: string | null };

const INTERACTIVE_TAP_KEYS = ['button_reply', 'list_reply'] as const;
// Who sent what, when: already mapped to data fields, so left out of contentAttributes.
const ENVELOPE_KEYS = new Set([
  'from',
  'from_user_id',
  'from_parent_user_id',
  'id',
  'timestamp',
  'type',
  'context',
]);

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/** Meta timestamps are unix seconds as a string; anything else maps to null, never to "now". */
function unixSecondsToIso(value: unknown): string | null {
  const text = typeof value === 'number' ? String(value) : value;
  if (typeof text !== 'string' || !/^\d{1,12}$/.test(text)) return null;
  return new Date(Number(text) * 1000).toISOString();
}

function findContact(
  contacts: WhatsAppContact[],
  phone: string | null,
  userId: string | undefined,
): WhatsAppContact | undefined {
  return contacts.find(
    (contact) =>
      (phone !== null && digitsOnly(contact.wa_id) === phone) ||
      (userId !== undefined && contact.user_id === userId),
  );
}

function commonData(
  channel: ChatChannelRef,
  messageId: string,
  contact: ContactRef,
  timestamp: unknown,
): JsonObject {
  return {
    workspaceId: channel.workspaceId,
    inboxId: channel.inboxId,
    channelId: channel.channelId,
    provider: 'whatsapp',
    messageId,
    contact,
    timestamp: unixSecondsToIso(timestamp),
  };
}

function contentAttributesOf(message: WhatsAppMessage): JsonObject {
  const attributes: JsonObject = {};
  for (const [key, value] of Object.entries(message)) {
    if (!ENVELOPE_KEYS.has(key)) attributes[key] = value;
  }
  return attributes;
}

function contentOf(message: JsonObject, type: string): string | null {
  const body = message[type];
  if (!isObject(body)) return null;
  return type === 'text' ? stringOrNull(body.body) : stringOrNull(body.caption);
}

/**
 * A tap's shown title and sent value. The message's own `interactive` (or template `button`)
 * object stays in contentAttributes exactly as Meta sent it: the inbox reads
 * `contentAttributes.interactive.button_reply.id` there (contract §3).
 */
function tapOf(message: JsonObject, type: string): Tap | null {
  const body = message[type];
  if (!isObject(body)) return null;
  if (type === 'button') return { content: stringOrNull(body.text), value: stringOrNull(body.payload) };
  if (type !== 'interactive') return null;
  for (const key of INTERACTIVE_TAP_KEYS) {
    const reply = body[key];
    if (isObject(reply)) return { content: stringOrNull(reply.title), value: stringOrNull(reply.id) };
  }
  return null;
}

function mapMessage(
  message: WhatsAppMessage,
  contacts: WhatsAppContact[],
  channel: ChatChannelRef,
): ChatEventDraft {
  const type = message.type ?? 'unknown';
  const senderPhone = digitsOnly(message.from);
  const contact = findContact(contacts, senderPhone, message.from_user_id);
  const phone = senderPhone ?? digitsOnly(contact?.wa_id);
  const userId = message.from_user_id ?? contact?.user_id;
  const data = {
    ...commonData(
      channel,
      message.id,
      { phone, name: contact?.profile?.name ?? null },
      message.timestamp,
    ),
    replyTo: message.context?.id ?? null,
  };
  const subject = phone ?? userId ?? message.from ?? '';
  const attributes = contentAttributesOf(message);

  const tap = tapOf(message, type);
  if (tap) {
    return {
      type: 'chat.tap',
      subject,
      dedupeKey: whatsappMessageKey(message),
      data: {
        ...data,
        message: { content: tap.content, contentType: type, contentAttributes: attributes },
        value: tap.value,
      },
    };
  }
  return {
    type: 'chat.message',
    subject,
    dedupeKey: whatsappMessageKey(message),
    data: {
      ...data,
      message: {
        content: contentOf(message, type),
        contentType: type,
        contentAttributes: attributes,
      },
    },
  };
}

function mapStatus(
  status: WhatsAppStatus,
  contacts: WhatsAppContact[],
  channel: ChatChannelRef,
): ChatEventDraft {
  const recipientPhone = digitsOnly(status.recipient_id);
  const contact = findContact(contacts, recipientPhone, status.recipient_user_id);
  const phone = recipientPhone ?? digitsOnly(contact?.wa_id);
  const userId = status.recipient_user_id ?? contact?.user_id;
  return {
    type: 'chat.status',
    subject: phone ?? userId ?? status.recipient_id ?? '',
    dedupeKey: whatsappStatusKey(status),
    data: {
      ...commonData(
        channel,
        status.id,
        { phone, name: contact?.profile?.name ?? null },
        status.timestamp,
      ),
      // A status answers no message of the contact's (contract §4: replyTo is the context id or null).
      replyTo: null,
      status: status.status,
      recipient: phone ?? userId ?? null,
      errors: status.errors ?? [],
    },
  };
}

type Path = Array<string | number>;

/** Parses each element of a list on its own: the good ones are returned, the bad ones recorded. */
function readItems<T>(
  items: unknown[] | undefined,
  schema: z.ZodType<T>,
  at: Path,
  mapping: ChatMapping,
): T[] {
  const read: T[] = [];
  (items ?? []).forEach((item, index) => {
    const parsed = schema.safeParse(item);
    if (parsed.success) {
      read.push(parsed.data);
    } else {
      const { path, problem } = firstProblem(parsed.error.issues);
      mapping.invalid.push({ path: [...at, index, ...path], problem });
    }
  });
  return read;
}

/**
 * Maps one webhook body to chat event drafts: every entry, change, message and status.
 * Pure: no I/O, clock or randomness. Throws ChatPayloadError when the body is not a WhatsApp
 * webhook at all; an item that cannot be read is skipped and listed in `invalid`.
 */
export function mapWhatsAppPayload(payload: unknown, channel: ChatChannelRef): ChatMapping {
  const parsed = whatsAppPayloadSchema.safeParse(payload);
  if (!parsed.success) {
    throw new ChatPayloadError('invalid WhatsApp webhook payload', parsed.error.issues);
  }
  const mapping = emptyMapping();
  parsed.data.entry.forEach((entry, e) => {
    entry.changes.forEach(({ value }, c) => {
      const at: Path = ['entry', e, 'changes', c, 'value'];
      const items = (value.messages?.length ?? 0) + (value.statuses?.length ?? 0);
      // Changes of other webhook fields have no metadata and no chat data.
      if (value.metadata === undefined && items === 0) return;
      const metadata = whatsAppMetadataSchema.safeParse(value.metadata);
      if (!metadata.success) {
        const { path, problem } = firstProblem(metadata.error.issues);
        // Without the number it was sent to, no item of the change can be placed in an inbox.
        for (let i = 0; i < items; i++) mapping.invalid.push({ path: [...at, 'metadata', ...path], problem });
        return;
      }
      if (metadata.data.phone_number_id !== channel.phoneNumberId) {
        mapping.foreign += 1;
        return;
      }
      // A contact that cannot be read only costs a name.
      const contacts = (value.contacts ?? []).flatMap((contact) => {
        const read = whatsAppContactSchema.safeParse(contact);
        return read.success ? [read.data] : [];
      });
      for (const message of readItems(value.messages, whatsAppMessageSchema, [...at, 'messages'], mapping)) {
        mapping.events.push(mapMessage(message, contacts, channel));
      }
      for (const status of readItems(value.statuses, whatsAppStatusSchema, [...at, 'statuses'], mapping)) {
        mapping.events.push(mapStatus(status, contacts, channel));
      }
    });
  });
  return mapping;
}
