import {
  whatsAppPayloadSchema,
  type WhatsAppContact,
  type WhatsAppMessage,
  type WhatsAppStatus,
} from './payload';

export interface ChatChannelRef {
  channelId: string;
  workspaceId: string;
  inboxId: string;
  phoneNumberId: string;
}

export type ChatEventType = 'chat.tap' | 'chat.message' | 'chat.status';

export interface ChatEventDraft {
  type: ChatEventType;
  /** Contact phone, digits only; the business-scoped user id when no phone is given. */
  subject: string;
  /** Message id; for a status `${messageId}:${status}`. */
  dedupeKey: string;
  /** The contract §4 chat `data`. */
  data: Record<string, unknown>;
}

export class WhatsAppPayloadError extends Error {
  readonly details: unknown;

  constructor(message: string, details: unknown) {
    super(message);
    this.name = 'WhatsAppPayloadError';
    this.details = details;
  }
}

export interface WhatsAppMappingResult {
  events: ChatEventDraft[];
  /** Changes addressed to another phone_number_id of the same WhatsApp Business Account. */
  foreignChanges: number;
}

type JsonObject = Record<string, unknown>;
type ContactRef = { phone: string | null; name: string | null };
type Tap = { reply: JsonObject; replyType: string; content: string | null; value: string | null };

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

function digitsOnly(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const digits = value.replace(/\D/g, '');
  return digits.length > 0 ? digits : null;
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

function tapOf(message: JsonObject, type: string): Tap | null {
  const body = message[type];
  if (!isObject(body)) return null;
  if (type === 'button') {
    return {
      reply: body,
      replyType: 'button',
      content: stringOrNull(body.text),
      value: stringOrNull(body.payload),
    };
  }
  if (type !== 'interactive') return null;
  for (const key of INTERACTIVE_TAP_KEYS) {
    const reply = body[key];
    if (isObject(reply)) {
      return {
        reply,
        replyType: key,
        content: stringOrNull(reply.title),
        value: stringOrNull(reply.id),
      };
    }
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
    delete attributes[type];
    return {
      type: 'chat.tap',
      subject,
      dedupeKey: message.id,
      data: {
        ...data,
        message: {
          content: tap.content,
          contentType: type,
          contentAttributes: { ...attributes, interactive: tap.reply, replyType: tap.replyType },
        },
        value: tap.value,
      },
    };
  }
  return {
    type: 'chat.message',
    subject,
    dedupeKey: message.id,
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
    dedupeKey: `${status.id}:${status.status}`,
    data: {
      ...commonData(
        channel,
        status.id,
        { phone, name: contact?.profile?.name ?? null },
        status.timestamp,
      ),
      status: status.status,
      recipient: phone ?? userId ?? null,
      errors: status.errors ?? [],
    },
  };
}

/**
 * Maps one webhook body to chat event drafts: every entry, change, message and status.
 * Pure: no I/O, clock or randomness. Throws WhatsAppPayloadError on a broken structure.
 */
export function mapWhatsAppPayload(payload: unknown, channel: ChatChannelRef): WhatsAppMappingResult {
  const parsed = whatsAppPayloadSchema.safeParse(payload);
  if (!parsed.success) {
    throw new WhatsAppPayloadError('invalid WhatsApp webhook payload', parsed.error.issues);
  }
  const events: ChatEventDraft[] = [];
  let foreignChanges = 0;
  for (const entry of parsed.data.entry) {
    for (const { value } of entry.changes) {
      // Changes of other webhook fields have no metadata and no chat data.
      if (value.metadata === undefined) continue;
      if (value.metadata.phone_number_id !== channel.phoneNumberId) {
        foreignChanges += 1;
        continue;
      }
      const contacts = value.contacts ?? [];
      for (const message of value.messages ?? []) events.push(mapMessage(message, contacts, channel));
      for (const status of value.statuses ?? []) events.push(mapStatus(status, contacts, channel));
    }
  }
  return { events, foreignChanges };
}
