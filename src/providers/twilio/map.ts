import { digitsOnly, emptyMapping, type ChatEventDraft, type ChatMapping } from '../chat-event';
import { twilioCallbackStatus, twilioDeliveryId, twilioMessageSid } from './delivery-id';

/*
 * Twilio Messaging webhooks (SMS and WhatsApp): one inbound message or one status callback
 * per request, as flat parameters (https://www.twilio.com/docs/messaging/guides/webhook-request,
 * .../outbound-message-logging). Parameters Twilio adds later are forwarded, not dropped.
 */

export interface TwilioChannelRef {
  channelId: string;
  workspaceId: string;
  inboxId: string;
  accountSid: string;
}

/** One value per parameter (the first, for a repeated one). */
export type TwilioFields = Readonly<Record<string, string>>;

/** Twilio attaches at most 10 media to a message. */
const MAX_MEDIA = 10;
/** Parameters mapped to `data` fields (or to no use at all), so left out of contentAttributes. */
const ENVELOPE = new Set([
  'AccountSid',
  'ApiVersion',
  'MessageSid',
  'SmsSid',
  'SmsMessageSid',
  'MessageStatus',
  'SmsStatus',
  'From',
  'To',
  'Body',
  'ProfileName',
  'NumMedia',
  'ButtonPayload',
  'ButtonText',
  'ListId',
  'ListTitle',
  'ListDescription',
  'Latitude',
  'Longitude',
  'Address',
  'Label',
  'OriginalRepliedMessageSid',
  'ErrorCode',
  'ErrorMessage',
]);
const MEDIA_PARAM = /^Media(Url|ContentType)\d+$/;

function nonEmpty(value: string | undefined): string | null {
  return value === undefined || value === '' ? null : value;
}

function channelTypeOf(address: string | undefined): 'whatsapp' | 'sms' {
  return address?.toLowerCase().startsWith('whatsapp:') ? 'whatsapp' : 'sms';
}

/** `whatsapp:+14155238886` → `14155238886`; an address without digits is kept as it is. */
function phoneOf(address: string | undefined): string | null {
  return digitsOnly(address?.replace(/^[a-z]+:/i, '')) ?? null;
}

function common(channel: TwilioChannelRef, messageSid: string, phone: string | null, name: string | null, address: string | undefined) {
  return {
    workspaceId: channel.workspaceId,
    inboxId: channel.inboxId,
    channelId: channel.channelId,
    provider: 'twilio',
    channelType: channelTypeOf(address),
    messageId: messageSid,
    contact: { phone, name },
    // Twilio's messaging webhooks carry no time of their own.
    timestamp: null,
  };
}

function leftovers(fields: TwilioFields): Record<string, string> {
  const rest: Record<string, string> = {};
  for (const [name, value] of Object.entries(fields)) {
    if (!ENVELOPE.has(name) && !MEDIA_PARAM.test(name)) rest[name] = value;
  }
  return rest;
}

function attachmentsOf(fields: TwilioFields) {
  const count = Math.min(Number.parseInt(fields.NumMedia ?? '0', 10) || 0, MAX_MEDIA);
  const attachments: Array<{ type: 'url'; data: string; mime: string | null }> = [];
  for (let i = 0; i < count; i++) {
    const url = nonEmpty(fields[`MediaUrl${i}`]);
    if (url) attachments.push({ type: 'url', data: url, mime: nonEmpty(fields[`MediaContentType${i}`]) });
  }
  return attachments;
}

function locationOf(fields: TwilioFields) {
  const latitude = Number(fields.Latitude);
  const longitude = Number(fields.Longitude);
  if (fields.Latitude === undefined || fields.Longitude === undefined || !Number.isFinite(latitude) || !Number.isFinite(longitude)) {
    return null;
  }
  return {
    latitude,
    longitude,
    ...(fields.Address !== undefined && { address: fields.Address }),
    ...(fields.Label !== undefined && { label: fields.Label }),
  };
}

function mapStatus(fields: TwilioFields, messageSid: string, status: string, channel: TwilioChannelRef): ChatEventDraft {
  const phone = phoneOf(fields.To);
  const code = nonEmpty(fields.ErrorCode);
  return {
    type: 'chat.status',
    subject: phone ?? fields.To ?? '',
    dedupeKey: twilioDeliveryId(fields) as string,
    data: {
      ...common(channel, messageSid, phone, null, fields.To),
      replyTo: null,
      status,
      recipient: phone,
      errors: code === null ? [] : [{ code: /^\d+$/.test(code) ? Number(code) : code, message: nonEmpty(fields.ErrorMessage) }],
    },
  };
}

function mapInbound(fields: TwilioFields, messageSid: string, channel: TwilioChannelRef): ChatEventDraft {
  const phone = phoneOf(fields.From);
  const base = {
    ...common(channel, messageSid, phone, nonEmpty(fields.ProfileName), fields.From),
    replyTo: nonEmpty(fields.OriginalRepliedMessageSid),
  };
  const attributes: Record<string, unknown> = leftovers(fields);
  const attachments = attachmentsOf(fields);
  if (attachments.length > 0) attributes.attachments = attachments;
  const location = locationOf(fields);
  if (location) attributes.location = location;
  const body = nonEmpty(fields.Body);
  const draft = { subject: phone ?? fields.From ?? '', dedupeKey: twilioDeliveryId(fields) as string };

  // A WhatsApp quick-reply button (session or template) or a list-picker row.
  const payload = nonEmpty(fields.ButtonPayload);
  const listId = nonEmpty(fields.ListId);
  if (payload !== null || listId !== null) {
    const isButton = payload !== null;
    const content = nonEmpty(isButton ? fields.ButtonText : fields.ListTitle) ?? body;
    if (isButton) attributes.button = { payload, text: nonEmpty(fields.ButtonText) };
    else attributes.list = { id: listId, title: nonEmpty(fields.ListTitle), description: nonEmpty(fields.ListDescription) };
    return {
      type: 'chat.tap',
      ...draft,
      data: {
        ...base,
        message: { content, contentType: isButton ? 'button' : 'list', contentAttributes: attributes },
        value: isButton ? payload : listId,
      },
    };
  }
  const contentType = nonEmpty(fields.MessageType) ?? (location ? 'location' : attachments.length > 0 ? 'media' : 'text');
  return {
    type: 'chat.message',
    ...draft,
    data: { ...base, message: { content: body, contentType, contentAttributes: attributes } },
  };
}

/**
 * Maps one Twilio callback to at most one chat event. Pure: no I/O, clock or randomness.
 * A callback for another account is counted in `foreign`; one without an AccountSid, a
 * MessageSid or a sender is listed in `invalid`.
 */
export function mapTwilioCallback(fields: TwilioFields, channel: TwilioChannelRef): ChatMapping {
  const mapping = emptyMapping();
  const messageSid = twilioMessageSid(fields);
  const missing = !fields.AccountSid ? 'AccountSid' : messageSid === undefined ? 'MessageSid' : undefined;
  if (missing) {
    mapping.invalid.push({ path: [missing], problem: `${missing} is required` });
    return mapping;
  }
  if (fields.AccountSid !== channel.accountSid) {
    mapping.foreign += 1;
    return mapping;
  }
  const status = twilioCallbackStatus(fields);
  if (status !== undefined) {
    if (!fields.To) mapping.invalid.push({ path: ['To'], problem: 'a status callback needs To' });
    else mapping.events.push(mapStatus(fields, messageSid as string, status, channel));
    return mapping;
  }
  if (!fields.From) mapping.invalid.push({ path: ['From'], problem: 'an inbound message needs From' });
  else mapping.events.push(mapInbound(fields, messageSid as string, channel));
  return mapping;
}
