import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChatEventDraft } from '../../src/providers/chat-event';
import { mapTwilioCallback, type TwilioChannelRef, type TwilioFields } from '../../src/providers/twilio/map';

type Json = Record<string, any>;
type MappedEvent = Omit<ChatEventDraft, 'data'> & { data: Json };

const ACCOUNT_SID = 'AC0123456789abcdef0123456789abcdef';
const channel: TwilioChannelRef = { channelId: 'ch_tw_1', workspaceId: 'ws_1', inboxId: 'inbox_1', accountSid: ACCOUNT_SID };
const envelope = { workspaceId: 'ws_1', inboxId: 'inbox_1', channelId: 'ch_tw_1', provider: 'twilio', timestamp: null };

function fixture(name: string): Record<string, string> {
  const form = readFileSync(join(__dirname, '..', 'fixtures', 'twilio', `${name}.form`), 'utf8');
  return Object.fromEntries(new URLSearchParams(form));
}

function mapOne(fields: TwilioFields): MappedEvent {
  const mapping = mapTwilioCallback(fields, channel);
  expect(mapping).toMatchObject({ invalid: [], foreign: 0, ignored: 0 });
  expect(mapping.events).toHaveLength(1);
  return mapping.events[0] as MappedEvent;
}

describe('mapTwilioCallback: inbound messages', () => {
  it('maps an inbound SMS to chat.message with the contract data', () => {
    const event = mapOne(fixture('sms-inbound'));
    expect(event).toEqual({
      type: 'chat.message',
      subject: '14155552671',
      dedupeKey: 'SM1f0e8ae6ade43cb3c0ce4525424e404f',
      data: {
        ...envelope,
        channelType: 'sms',
        messageId: 'SM1f0e8ae6ade43cb3c0ce4525424e404f',
        contact: { phone: '14155552671', name: null },
        replyTo: null,
        message: {
          content: 'Hello! Is my order 42 on its way?',
          contentType: 'text',
          contentAttributes: expect.objectContaining({ FromCity: 'SAN FRANCISCO', NumSegments: '1' }),
        },
      },
    });
    // Envelope parameters are data fields, not attributes.
    for (const key of ['AccountSid', 'MessageSid', 'From', 'To', 'Body', 'SmsStatus']) {
      expect(event.data.message.contentAttributes).not.toHaveProperty(key);
    }
  });

  it('maps a WhatsApp message: digits of From without whatsapp:, ProfileName, channelType whatsapp', () => {
    const event = mapOne(fixture('whatsapp-inbound'));
    expect(event.subject).toBe('447700900123');
    expect(event.data).toMatchObject({
      channelType: 'whatsapp',
      contact: { phone: '447700900123', name: 'Zoë Martin' },
      message: { content: 'Olá! Can I change the delivery slot?', contentType: 'text' },
    });
    expect(event.data.message.contentAttributes).toMatchObject({ WaId: '447700900123', MessageType: 'text' });
  });

  it('maps MMS media to url attachments in order, with their types', () => {
    const fields = fixture('mms-inbound');
    const event = mapOne(fields);
    expect(event.data.message.content).toBe('Receipt + photo of the box');
    expect(event.data.message.contentType).toBe('media');
    expect(event.data.message.contentAttributes.attachments).toEqual([
      { type: 'url', data: fields.MediaUrl0, mime: 'image/jpeg' },
      { type: 'url', data: fields.MediaUrl1, mime: 'application/pdf' },
    ]);
    expect(Object.keys(event.data.message.contentAttributes).filter((k) => k.startsWith('Media'))).toEqual([]);
  });

  it('maps a location with numbers, address and label, and null content', () => {
    const event = mapOne(fixture('whatsapp-location'));
    expect(event.data.message.content).toBeNull();
    expect(event.data.message.contentType).toBe('location');
    expect(event.data.message.contentAttributes.location).toEqual({
      latitude: 52.520008,
      longitude: 13.404954,
      address: 'Alexanderplatz, 10178 Berlin',
      label: 'Pickup point',
    });
  });

  it('takes replyTo from OriginalRepliedMessageSid', () => {
    expect(mapOne(fixture('whatsapp-button')).data.replyTo).toBe('MM5d0e3f4a6b7c8d9e0f1a2b3c4d5e6f70');
  });

  it('caps the media read at 10 and skips a missing MediaUrlN', () => {
    const fields = { ...fixture('sms-inbound'), NumMedia: '99', MediaUrl0: 'https://api.twilio.com/m0', MediaUrl2: 'https://api.twilio.com/m2', MediaUrl11: 'https://api.twilio.com/m11' };
    expect(mapOne(fields).data.message.contentAttributes.attachments).toEqual([
      { type: 'url', data: 'https://api.twilio.com/m0', mime: null },
      { type: 'url', data: 'https://api.twilio.com/m2', mime: null },
    ]);
  });
});

describe('mapTwilioCallback: taps', () => {
  it('maps a quick-reply button to chat.tap: value = ButtonPayload, content = ButtonText', () => {
    const event = mapOne(fixture('whatsapp-button'));
    expect(event.type).toBe('chat.tap');
    expect(event.dedupeKey).toBe('SM4c9d2e3f5a6b7c8d9e0f1a2b3c4d5e6f');
    expect(event.data.value).toBe('slot-1400');
    expect(event.data.message).toMatchObject({
      content: 'Tomorrow 14:00',
      contentType: 'button',
      contentAttributes: { button: { payload: 'slot-1400', text: 'Tomorrow 14:00' } },
    });
  });

  it('maps a list reply to chat.tap: value = the row id, content = its title', () => {
    const event = mapOne(fixture('whatsapp-list'));
    expect(event.type).toBe('chat.tap');
    expect(event.data.value).toBe('priority_express');
    expect(event.data.message).toMatchObject({
      content: 'Priority Mail Express',
      contentType: 'list',
      contentAttributes: { list: { id: 'priority_express', title: 'Priority Mail Express', description: null } },
    });
  });

  it('falls back to Body for the title when ButtonText is missing', () => {
    const fields = { ...fixture('whatsapp-button') };
    delete (fields as Record<string, string>).ButtonText;
    expect(mapOne(fields).data.message.content).toBe('Tomorrow 14:00');
  });
});

describe('mapTwilioCallback: status callbacks', () => {
  it('maps a delivered SMS status to chat.status, deduplicated by MessageSid + status', () => {
    expect(mapOne(fixture('status-delivered'))).toEqual({
      type: 'chat.status',
      subject: '14155552671',
      dedupeKey: 'SM9b4c7d8e0f1a2b3c4d5e6f708192a3b4:delivered',
      data: {
        ...envelope,
        channelType: 'sms',
        messageId: 'SM9b4c7d8e0f1a2b3c4d5e6f708192a3b4',
        contact: { phone: '14155552671', name: null },
        replyTo: null,
        status: 'delivered',
        recipient: '14155552671',
        errors: [],
      },
    });
  });

  it('maps a failed WhatsApp status with its ErrorCode', () => {
    const event = mapOne(fixture('status-failed-whatsapp'));
    expect(event.data).toMatchObject({
      channelType: 'whatsapp',
      status: 'failed',
      recipient: '447700900123',
      errors: [{ code: 63016, message: null }],
    });
  });

  // receiving is a status (the catalogue's message.status.receiving, as the trigger preset names it): only received is inbound.
  it.each(['queued', 'sent', 'delivered', 'read', 'undelivered', 'failed', 'receiving'])('maps MessageStatus %s to chat.status', (status) => {
    const event = mapOne({ ...fixture('status-read-whatsapp'), MessageStatus: status });
    expect(event.type).toBe('chat.status');
    expect(event.dedupeKey).toBe(`SMa0c5d8e9f1a2b3c4d5e6f708192a3b4c:${status}`);
  });

  it('treats MessageStatus received as the inbound message it is', () => {
    expect(mapOne({ ...fixture('sms-inbound'), MessageStatus: 'received' }).type).toBe('chat.message');
  });
});

describe('mapTwilioCallback: what is not published', () => {
  it('counts a callback for another AccountSid as foreign', () => {
    const mapping = mapTwilioCallback({ ...fixture('sms-inbound'), AccountSid: 'AC99999999999999999999999999999999' }, channel);
    expect(mapping).toEqual({ events: [], invalid: [], foreign: 1, ignored: 0 });
  });

  it.each([
    ['AccountSid', 'sms-inbound'],
    ['From', 'sms-inbound'],
    ['To', 'status-delivered'],
  ])('lists a callback without %s as invalid', (name, file) => {
    const fields: Record<string, string> = { ...fixture(file) };
    delete fields[name];
    expect(mapTwilioCallback(fields, channel).invalid).toEqual([{ path: [name], problem: expect.any(String) }]);
  });

  it('lists a callback without any message sid as invalid', () => {
    const fields: Record<string, string> = { ...fixture('sms-inbound') };
    for (const name of ['MessageSid', 'SmsSid', 'SmsMessageSid']) delete fields[name];
    expect(mapTwilioCallback(fields, channel).invalid.map((item) => item.path)).toEqual([['MessageSid']]);
  });

  it('is pure: same output twice, input untouched', () => {
    const fields = fixture('mms-inbound');
    const before = { ...fields };
    expect(mapTwilioCallback(fields, channel)).toEqual(mapTwilioCallback(fields, channel));
    expect(fields).toEqual(before);
  });
});
