import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ChatPayloadError, type ChatEventDraft, type ChatMapping } from '../../src/providers/chat-event';
import { mapTelegramUpdate, type TelegramChannelRef } from '../../src/providers/telegram/map';

type Json = Record<string, any>;
type MappedEvent = Omit<ChatEventDraft, 'data'> & { data: Json };

const FIXTURES = join(__dirname, '..', 'fixtures', 'telegram');

function fixture(name: string): Json {
  return JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), 'utf8'));
}

const channel: TelegramChannelRef = { channelId: 'ch_tg_1', workspaceId: 'ws_1', inboxId: 'inbox_1' };
const envelope = { workspaceId: 'ws_1', inboxId: 'inbox_1', channelId: 'ch_tg_1', provider: 'telegram' };
const tester = { id: '1111111', phone: null, name: 'Test Firstname Test Lastname', username: 'Testusername' };

function mapOne(payload: unknown): MappedEvent {
  const mapping = mapTelegramUpdate(payload, channel);
  expect(mapping).toMatchObject({ invalid: [], foreign: 0, ignored: 0 });
  expect(mapping.events).toHaveLength(1);
  return mapping.events[0] as MappedEvent;
}

describe('mapTelegramUpdate: messages → chat.message', () => {
  it('maps a text message with the contract data, deduplicated by update_id', () => {
    expect(mapOne(fixture('text'))).toEqual({
      type: 'chat.message',
      subject: '1111111',
      dedupeKey: '10000',
      data: {
        ...envelope,
        messageId: '1365',
        contact: tester,
        timestamp: '2015-09-07T17:05:32.000Z',
        replyTo: null,
        message: { content: '/start', contentType: 'text', contentAttributes: {} },
      },
    });
  });

  it('takes replyTo from reply_to_message and drops the quoted message itself', () => {
    const event = mapOne(fixture('reply'));
    expect(event.data.replyTo).toBe('1334');
    expect(event.data.message.contentAttributes).toEqual({});
  });

  it('maps an edited message with the edit time and marks it edited', () => {
    const event = mapOne(fixture('edited-message'));
    expect(event.type).toBe('chat.message');
    expect(event.dedupeKey).toBe('10002');
    expect(event.data.messageId).toBe('1365');
    expect(event.data.timestamp).toBe('2015-09-07T17:23:20.000Z');
    expect(event.data.message).toEqual({
      content: 'Edited text',
      contentType: 'text',
      contentAttributes: { edit_date: 1441646600, edited: true },
    });
  });

  it('maps a photo to its largest size as a file_id attachment, with the caption as content', () => {
    const event = mapOne(fixture('photo'));
    expect(event.data.contact).toEqual(tester);
    expect(event.data.message).toEqual({
      content: 'Black Beanie, size M?',
      contentType: 'photo',
      contentAttributes: {
        attachments: [
          {
            type: 'file_id',
            data: 'AgACAgIAAxkBAAIBYWeHlargeXXXXXXXXXXXXXXXXXXXX',
            mime: 'image/jpeg',
            kind: 'photo',
            name: null,
            size: 91226,
          },
        ],
      },
    });
  });

  it.each([
    ['voice', { type: 'file_id', data: 'AwADBAADbXXXXXXXXXXXGBdhD2l6_XX', mime: 'audio/ogg', kind: 'voice', name: null, size: 23000 }],
    ['document', { type: 'file_id', data: 'AwADBAADbXXXXXXXXXXXGBdhD2l6_XX', mime: 'application/pdf', kind: 'document', name: 'Testfile.pdf', size: 536392 }],
  ])('maps a %s to a file_id attachment with no content', (name, attachment) => {
    const event = mapOne(fixture(name));
    expect(event.data.message).toEqual({ content: null, contentType: name, contentAttributes: { attachments: [attachment] } });
  });

  it('maps a location with the coordinates in contentAttributes', () => {
    const event = mapOne(fixture('location'));
    expect(event.data.message).toEqual({
      content: null,
      contentType: 'location',
      contentAttributes: { location: { latitude: 52.520008, longitude: 13.404954 } },
    });
    expect(event.data.contact).toEqual({ id: '1111111', phone: null, name: 'Test Firstname', username: 'Testusername' });
  });

  it('maps a shared contact into contentAttributes; the sender stays the contact with phone null', () => {
    const event = mapOne(fixture('contact'));
    expect(event.data.message.contentType).toBe('contact');
    expect(event.data.message.contentAttributes.contact).toEqual({
      phone_number: '+49 30 1234567',
      first_name: 'Shared',
      last_name: 'Person',
      user_id: 3333333,
    });
    expect(event.data.contact.phone).toBeNull();
    expect(event.data.contact.id).toBe('1111111');
  });

  it('keys a group message by the chat, not the sender', () => {
    const payload = fixture('text');
    payload.message.chat = { id: -1001234567890, type: 'supergroup', title: 'Support' };
    const event = mapOne(payload);
    expect(event.subject).toBe('-1001234567890');
    expect(event.data.contact.id).toBe('1111111');
  });

  it('labels a message of a kind it does not know as unknown and keeps its fields', () => {
    const payload = fixture('text');
    delete payload.message.text;
    payload.message.hologram = { id: 'h-1' };
    const event = mapOne(payload);
    expect(event.data.message).toEqual({ content: null, contentType: 'unknown', contentAttributes: { hologram: { id: 'h-1' } } });
  });

  it('maps a missing or absurd date to null, never to the current time', () => {
    const payload = fixture('text');
    payload.message.date = -5;
    expect(mapOne(payload).data.timestamp).toBeNull();
  });
});

describe('mapTelegramUpdate: callback_query → chat.tap', () => {
  it('maps a tap with value = data, content = the tapped button text, replyTo = the keyboard message', () => {
    expect(mapOne(fixture('callback-query'))).toEqual({
      type: 'chat.tap',
      subject: '1111111',
      dedupeKey: '10008',
      data: {
        ...envelope,
        messageId: '4382bfdwdsb323b2d9',
        contact: tester,
        timestamp: null,
        replyTo: '1410',
        value: 'slot-1400',
        message: {
          content: 'Tomorrow 14:00',
          contentType: 'callback_query',
          contentAttributes: {
            callback_query: { id: '4382bfdwdsb323b2d9', chat_instance: '-7338924112541063000', data: 'slot-1400' },
            button: { text: 'Tomorrow 14:00', callback_data: 'slot-1400' },
          },
        },
      },
    });
  });

  it('maps a tap on an inline-mode message: the user is the conversation, replyTo the inline message id', () => {
    const event = mapOne(fixture('callback-query-inline'));
    expect(event.type).toBe('chat.tap');
    expect(event.subject).toBe('1111111');
    expect(event.data.replyTo).toBe('1234csdbsk4839');
    expect(event.data.value).toBe('Data from button callback');
    expect(event.data.message.content).toBeNull();
  });

  it('gives null content when no button of the keyboard sends that data (or the keyboard is unreadable)', () => {
    const payload = fixture('callback-query');
    payload.callback_query.data = 'not-on-the-keyboard';
    expect(mapOne(payload).data.message.content).toBeNull();
    payload.callback_query.message.reply_markup = { inline_keyboard: 'broken' };
    payload.callback_query.data = 'slot-1400';
    const event = mapOne(payload);
    expect(event.data.message.content).toBeNull();
    expect(event.data.value).toBe('slot-1400');
  });

  it('maps a tap on a message that is no longer accessible (date 0, no keyboard)', () => {
    const payload = fixture('callback-query');
    payload.callback_query.message = { chat: { id: 1111111, type: 'private' }, message_id: 1410, date: 0 };
    const event = mapOne(payload);
    expect(event.data.replyTo).toBe('1410');
    expect(event.data.message.content).toBeNull();
  });
});

describe('mapTelegramUpdate: everything else', () => {
  it('counts another update kind as ignored and maps nothing', () => {
    expect(mapTelegramUpdate(fixture('inline-query'), channel)).toEqual({ events: [], invalid: [], foreign: 0, ignored: 1 });
  });

  it('skips a message without a chat as invalid, saying where, not what', () => {
    const payload = fixture('text');
    delete payload.message.chat;
    const mapping: ChatMapping = mapTelegramUpdate(payload, channel);
    expect(mapping.events).toEqual([]);
    expect(mapping.invalid).toEqual([{ path: ['message', 'chat'], problem: expect.any(String) }]);
    expect(JSON.stringify(mapping.invalid)).not.toContain('/start');
  });

  it('skips a callback_query without an id as invalid', () => {
    const payload = fixture('callback-query');
    delete payload.callback_query.id;
    expect(mapTelegramUpdate(payload, channel).invalid.map((item) => item.path)).toEqual([['callback_query', 'id']]);
  });

  it.each([
    ['null', null],
    ['an array', []],
    ['an object without update_id', { message: {} }],
    ['a negative update_id', { update_id: -1 }],
    ['a string update_id', { update_id: '10000' }],
  ])('rejects %s as not an update', (_label, payload) => {
    expect(() => mapTelegramUpdate(payload, channel)).toThrow(ChatPayloadError);
  });

  it('is pure: same output twice, input untouched', () => {
    const payload = fixture('callback-query');
    const before = structuredClone(payload);
    expect(mapTelegramUpdate(payload, channel)).toEqual(mapTelegramUpdate(payload, channel));
    expect(payload).toEqual(before);
  });
});
