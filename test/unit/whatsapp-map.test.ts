import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ChatPayloadError, type ChatEventDraft, type SkippedItem } from '../../src/providers/chat-event';
import { mapWhatsAppPayload, type ChatChannelRef } from '../../src/providers/meta/whatsapp-map';

type Json = Record<string, any>;
// Tests read nested fields of `data`, typed `unknown` for consumers.
type MappedEvent = Omit<ChatEventDraft, 'data'> & { data: Json };

const FIXTURES = join(__dirname, '..', 'fixtures', 'whatsapp');

function fixture(name: string): Json {
  return JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), 'utf8'));
}

/** The first message of the first change, for tests that alter one field. */
function firstMessage(payload: Json): Json {
  return payload.entry[0].changes[0].value.messages[0];
}

const channel: ChatChannelRef = {
  channelId: 'ch_wa_1',
  workspaceId: 'ws_1',
  inboxId: 'inbox_1',
  phoneNumberId: '106540352242922',
};

const envelope = {
  workspaceId: 'ws_1',
  inboxId: 'inbox_1',
  channelId: 'ch_wa_1',
  provider: 'whatsapp',
};

const sheena = { phone: '16505551234', name: 'Sheena Nelson' };

function mapAll(payload: unknown): { events: MappedEvent[]; foreign: number; invalid: SkippedItem[]; ignored: number } {
  return mapWhatsAppPayload(payload, channel);
}

function mapOne(payload: unknown): MappedEvent {
  const { events, foreign, invalid } = mapAll(payload);
  expect(foreign).toBe(0);
  expect(invalid).toEqual([]);
  expect(events).toHaveLength(1);
  return events[0];
}

/** The items skipped as unreadable, by where they are and why. */
function skipped(payload: unknown): SkippedItem[] {
  const { events, invalid } = mapAll(payload);
  expect(events).toEqual([]);
  return invalid;
}

function expectPayloadError(payload: unknown, path?: Array<string | number>): void {
  let caught: unknown;
  try {
    mapWhatsAppPayload(payload, channel);
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(ChatPayloadError);
  const issues = (caught as ChatPayloadError).details as Array<{ path: unknown[] }>;
  expect(Array.isArray(issues)).toBe(true);
  expect(issues.length).toBeGreaterThan(0);
  if (path) expect(issues.map((issue) => issue.path)).toContainEqual(path);
}

describe('mapWhatsAppPayload: messages', () => {
  it('maps a text message to chat.message with the contract data', () => {
    expect(mapOne(fixture('text'))).toEqual({
      type: 'chat.message',
      subject: '16505551234',
      dedupeKey: 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=',
      data: {
        ...envelope,
        messageId: 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=',
        contact: sheena,
        timestamp: '2025-06-08T20:59:43.000Z',
        replyTo: null,
        message: {
          content: 'Does it come in another color?',
          contentType: 'text',
          contentAttributes: { text: { body: 'Does it come in another color?' } },
        },
      },
    });
  });

  it('maps an interactive button_reply to chat.tap with the whole interactive object as Meta sent it', () => {
    expect(mapOne(fixture('interactive-button-reply'))).toEqual({
      type: 'chat.tap',
      subject: '16505551234',
      dedupeKey: 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQUI3NzlBRjY0NTcxMUMzMzUwMgA=',
      data: {
        ...envelope,
        messageId: 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQUI3NzlBRjY0NTcxMUMzMzUwMgA=',
        contact: sheena,
        timestamp: '2025-06-08T21:01:52.000Z',
        replyTo: 'wamid.HBgLMTY1MDM4Nzk0MzkVAgARGBI3NTRDQjQ2MjgzRjVBNjhFNDMA',
        message: {
          content: 'Change',
          contentType: 'interactive',
          contentAttributes: {
            interactive: { type: 'button_reply', button_reply: { id: 'change-button', title: 'Change' } },
          },
        },
        value: 'change-button',
      },
    });
  });

  it('maps an interactive list_reply to chat.tap with the reply as received', () => {
    const event = mapOne(fixture('interactive-list-reply'));
    expect(event.type).toBe('chat.tap');
    expect(event.dedupeKey).toBe('wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTY1QkMyMTU5NzRGRTQ2OTI4QQA=');
    expect(event.data.value).toBe('priority_express');
    expect(event.data.replyTo).toBe('wamid.HBgLMTY1MDM4Nzk0MzkVAgARGBJCMkU0NjA2QzBDMzQ5RDcyMkYA');
    expect(event.data.message).toEqual({
      content: 'Priority Mail Express',
      contentType: 'interactive',
      contentAttributes: {
        interactive: {
          type: 'list_reply',
          list_reply: {
            id: 'priority_express',
            title: 'Priority Mail Express',
            description: 'Next Day to 2 Days',
          },
        },
      },
    });
    // Where the inbox reads the sent value (contract §3).
    expect(event.data.message.contentAttributes.interactive.list_reply.id).toBe(event.data.value);
  });

  it('maps a template quick-reply button to chat.tap with its payload as value', () => {
    const event = mapOne(fixture('template-quick-reply-button'));
    expect(event.type).toBe('chat.tap');
    expect(event.subject).toBe('16505551234');
    expect(event.data.value).toBe('STOP_PROMOTIONS');
    expect(event.data.replyTo).toBe('wamid.HBgLMTY1MDM4Nzk0MzkVAgARGBI0QzE5NkNENUU0RjhENzg2NUIA');
    expect(event.data.timestamp).toBe('2025-06-08T21:05:01.000Z');
    expect(event.data.message).toEqual({
      content: 'Stop promotions',
      contentType: 'button',
      contentAttributes: { button: { payload: 'STOP_PROMOTIONS', text: 'Stop promotions' } },
    });
  });

  it('maps an image with its caption as content and the media object kept', () => {
    const payload = fixture('image');
    const event = mapOne(payload);
    expect(event.type).toBe('chat.message');
    expect(event.data.contact).toEqual(sheena);
    expect(event.data.timestamp).toBe('2025-06-08T21:06:42.000Z');
    expect(event.data.message).toEqual({
      content: 'Black Beanie',
      contentType: 'image',
      contentAttributes: { image: firstMessage(payload).image },
    });
    expect(event.data.message.contentAttributes.image.id).toBe('1003383421387256');
  });

  it('maps a location with null content and the coordinates in contentAttributes', () => {
    const event = mapOne(fixture('location'));
    expect(event.type).toBe('chat.message');
    expect(event.data.message.content).toBeNull();
    expect(event.data.message.contentType).toBe('location');
    expect(event.data.message.contentAttributes).toEqual({
      location: {
        address: '1 Hacker Way, Menlo Park, CA 94025',
        latitude: 37.483307,
        longitude: -122.148981,
        name: 'Meta Headquarters',
        url: 'https://meta.com',
      },
    });
  });

  it('maps a reaction to chat.message carrying the emoji and the reacted message id', () => {
    const event = mapOne(fixture('reaction'));
    expect(event.type).toBe('chat.message');
    expect(event.data.message).toEqual({
      content: null,
      contentType: 'reaction',
      contentAttributes: {
        reaction: {
          message_id: 'wamid.HBgLMTY1MDM4Nzk0MzkVAgARGBI3NTRDQjQ2MjgzRjVBNjhFNDMA',
          emoji: '\u{1F44D}',
        },
      },
    });
  });

  it('maps an unsupported message with its errors kept', () => {
    const event = mapOne(fixture('unsupported'));
    expect(event.type).toBe('chat.message');
    expect(event.data.message.content).toBeNull();
    expect(event.data.message.contentType).toBe('unsupported');
    expect(event.data.message.contentAttributes.unsupported).toEqual({ type: 'poll' });
    expect(event.data.message.contentAttributes.errors[0].code).toBe(131051);
  });

  it('never drops a message of a type it does not know', () => {
    const payload = fixture('text');
    const message = firstMessage(payload);
    delete message.text;
    message.type = 'hologram';
    message.hologram = { id: 'holo-1', caption: 'Look at this' };
    const event = mapOne(payload);
    expect(event.type).toBe('chat.message');
    expect(event.data.message).toEqual({
      content: 'Look at this',
      contentType: 'hologram',
      contentAttributes: { hologram: { id: 'holo-1', caption: 'Look at this' } },
    });
  });

  it('labels a message without a type as unknown', () => {
    const payload = fixture('text');
    delete firstMessage(payload).type;
    const event = mapOne(payload);
    expect(event.type).toBe('chat.message');
    expect(event.data.message.contentType).toBe('unknown');
    expect(event.data.message.content).toBeNull();
  });

  it('maps an interactive reply that is not a tap (flow nfm_reply) to chat.message', () => {
    const payload = fixture('interactive-button-reply');
    const interactive = {
      type: 'nfm_reply',
      nfm_reply: { name: 'flow', body: 'Sent', response_json: '{"flow_token":"t-1"}' },
    };
    firstMessage(payload).interactive = interactive;
    const event = mapOne(payload);
    expect(event.type).toBe('chat.message');
    expect(event.data.value).toBeUndefined();
    expect(event.data.message).toEqual({
      content: null,
      contentType: 'interactive',
      contentAttributes: { interactive },
    });
  });

  it('keeps unknown message fields such as a click-to-WhatsApp referral', () => {
    const payload = fixture('text');
    const referral = {
      source_url: 'https://fb.me/2ZulEu42P',
      source_id: '120226305854810726',
      source_type: 'ad',
      headline: 'Chat with us',
      ctwa_clid: 'ARAkLkA8rmlFeiCktEJQ',
    };
    firstMessage(payload).referral = referral;
    payload.some_future_top_level_field = true;
    const event = mapOne(payload);
    expect(event.data.message.contentAttributes).toEqual({
      text: { body: 'Does it come in another color?' },
      referral,
    });
  });

  it('normalises the phone to digits and still finds the contact name', () => {
    const payload = fixture('text');
    firstMessage(payload).from = '+1 650-555-1234';
    const event = mapOne(payload);
    expect(event.subject).toBe('16505551234');
    expect(event.data.contact).toEqual(sheena);
  });

  it('gives a null name when no contact matches the sender', () => {
    const payload = fixture('text');
    payload.entry[0].changes[0].value.contacts = [];
    expect(mapOne(payload).data.contact).toEqual({ phone: '16505551234', name: null });
  });

  it('maps an unparseable timestamp to null, never to the current time (the accept path publishes the time of receipt)', () => {
    const payload = fixture('text');
    firstMessage(payload).timestamp = 'yesterday';
    expect(mapOne(payload).data.timestamp).toBeNull();
  });
});

describe('mapWhatsAppPayload: statuses', () => {
  it('maps a read status to chat.status', () => {
    expect(mapOne(fixture('status-read'))).toEqual({
      type: 'chat.status',
      subject: '16505551234',
      dedupeKey: 'wamid.HBgLMTY1MDM4Nzk0MzkVAgARGBI3NTRDQjQ2MjgzRjVBNjhFNDMA:read',
      data: {
        ...envelope,
        messageId: 'wamid.HBgLMTY1MDM4Nzk0MzkVAgARGBI3NTRDQjQ2MjgzRjVBNjhFNDMA',
        contact: { phone: '16505551234', name: null },
        timestamp: '2025-06-08T21:13:26.000Z',
        replyTo: null,
        status: 'read',
        recipient: '16505551234',
        errors: [],
      },
    });
  });

  it('maps a failed status with its errors as received', () => {
    const payload = fixture('status-failed');
    const event = mapOne(payload);
    expect(event.type).toBe('chat.status');
    expect(event.dedupeKey).toBe('wamid.HBgLMTY1MDM4Nzk0MzkVAgARGBJBQjNDNDU2Nzg5MEFCQ0RFRjEA:failed');
    expect(event.data.status).toBe('failed');
    expect(event.data.recipient).toBe('16505551234');
    expect(event.data.errors).toEqual(payload.entry[0].changes[0].value.statuses[0].errors);
    expect(event.data.errors[0]).toMatchObject({ code: 131026, title: 'Message undeliverable' });
  });
});

describe('mapWhatsAppPayload: business-scoped user ids', () => {
  const { events, foreign } = mapAll(fixture('bsuid'));

  it('maps every message and status of both changes', () => {
    expect(foreign).toBe(0);
    expect(events.map((event) => event.type)).toEqual(['chat.message', 'chat.message', 'chat.status']);
  });

  it('uses the BSUID as subject when a username user sends no phone', () => {
    expect(events[0].subject).toBe('US.13491208655302741918');
    expect(events[0].data.contact).toEqual({ phone: null, name: 'Sheena Nelson' });
    expect(events[0].data.message.content).toBe('Is my order on its way?');
  });

  it('prefers the phone when both a phone and a BSUID are given', () => {
    expect(events[1].subject).toBe('447700900123');
    expect(events[1].data.contact).toEqual({ phone: '447700900123', name: 'Raj Patel' });
  });

  it('uses recipient_user_id for a status sent to a BSUID', () => {
    expect(events[2].subject).toBe('US.13491208655302741918');
    expect(events[2].dedupeKey).toBe(
      'wamid.HBgLVVMuMTM0OTEyMDg2NTUzMDI3NDE5MTgVAgARGBIxMjM0NTY3ODlBQkNERUYwMTIA:delivered',
    );
    expect(events[2].data.recipient).toBe('US.13491208655302741918');
    expect(events[2].data.contact).toEqual({ phone: null, name: 'Sheena Nelson' });
  });
});

describe('mapWhatsAppPayload: a batch of entries and changes', () => {
  const payload = fixture('batch');
  const { events, foreign } = mapAll(payload);

  it('reads every entry, change, message and status in order', () => {
    expect(events.map((event) => [event.type, event.dedupeKey])).toEqual([
      ['chat.message', 'wamid.BATCH.A1'],
      ['chat.tap', 'wamid.BATCH.A2'],
      ['chat.message', 'wamid.BATCH.A3'],
      ['chat.status', 'wamid.BATCH.OUT1:sent'],
      ['chat.status', 'wamid.BATCH.OUT1:delivered'],
      ['chat.tap', 'wamid.BATCH.B1'],
      ['chat.status', 'wamid.BATCH.OUT1:read'],
      ['chat.status', 'wamid.BATCH.OUT3:failed'],
    ]);
  });

  it('counts the change for another phone_number_id and maps nothing from it', () => {
    expect(foreign).toBe(1);
    expect(events.some((event) => event.data.messageId === 'wamid.BATCH.FOREIGN')).toBe(false);
    expect(events.some((event) => event.subject === '16505559999')).toBe(false);
  });

  it('looks each contact name up in its own change', () => {
    expect(events.map((event) => event.subject)).toEqual([
      '16505551234',
      '447700900123',
      '16505551234',
      '447700900123',
      '447700900123',
      '447700900123',
      '447700900123',
      '16505551234',
    ]);
    expect(events[1].data.contact).toEqual({ phone: '447700900123', name: 'Raj Patel' });
    expect(events[5].data.contact).toEqual({ phone: '447700900123', name: 'Raj Patel' });
    // Status changes without contacts[] carry no name.
    expect(events[3].data.contact).toEqual({ phone: '447700900123', name: null });
  });

  it('maps each kind with its own content and value', () => {
    expect(events[0].data.message.content).toBe('Hello, is anyone there?');
    expect(events[1].data.value).toBe('cancel-button');
    expect(events[1].data.replyTo).toBe('wamid.BATCH.OUT1');
    expect(events[2].data.message.content).toBeNull();
    expect(events[2].data.message.contentAttributes.image.id).toBe('1214305869864419');
    expect(events[5].data.value).toBe('slot-0930');
    expect(events[5].data.message.content).toBe('09:30');
    expect(events[6].data.errors).toEqual([]);
    expect(events[7].data.errors).toHaveLength(1);
    expect(events[7].data.errors[0].code).toBe(131047);
  });

  it('is pure: same output twice, input untouched', () => {
    const before = structuredClone(payload);
    expect(mapWhatsAppPayload(payload, channel)).toEqual({ events, foreign, invalid: [], ignored: 0 });
    expect(payload).toEqual(before);
  });
});

describe('mapWhatsAppPayload: structure', () => {
  it('maps an empty entry list to no events', () => {
    expect(mapWhatsAppPayload({ object: 'whatsapp_business_account', entry: [] }, channel)).toEqual({
      events: [],
      foreign: 0,
      invalid: [],
      ignored: 0,
    });
  });

  it.each([
    ['null', null],
    ['a string', 'not json'],
    ['a number', 42],
    ['an array', []],
  ])('rejects a payload that is %s', (_label, payload) => {
    expectPayloadError(payload);
  });

  it('rejects another webhook object', () => {
    expectPayloadError({ object: 'page', entry: [] }, ['object']);
  });

  it('rejects entry that is not an array', () => {
    expectPayloadError({ object: 'whatsapp_business_account', entry: {} }, ['entry']);
  });

  it('rejects changes that is not an array', () => {
    expectPayloadError(
      { object: 'whatsapp_business_account', entry: [{ id: '1', changes: 'x' }] },
      ['entry', 0, 'changes'],
    );
  });

  it('skips a message without id (dedupe needs it) and says where', () => {
    const payload = fixture('text');
    delete firstMessage(payload).id;
    expect(skipped(payload)).toEqual([
      { path: ['entry', 0, 'changes', 0, 'value', 'messages', 0, 'id'], problem: expect.any(String) },
    ]);
  });

  it('skips a message with neither from nor from_user_id', () => {
    const payload = fixture('text');
    delete firstMessage(payload).from;
    expect(skipped(payload).map((item) => item.path)).toEqual([['entry', 0, 'changes', 0, 'value', 'messages', 0, 'from']]);
  });

  it('skips a status without id', () => {
    const payload = fixture('status-read');
    delete payload.entry[0].changes[0].value.statuses[0].id;
    expect(skipped(payload).map((item) => item.path)).toEqual([['entry', 0, 'changes', 0, 'value', 'statuses', 0, 'id']]);
  });

  it('skips every item of a change without metadata.phone_number_id, one entry each', () => {
    const payload = fixture('text');
    delete payload.entry[0].changes[0].value.metadata;
    expect(skipped(payload).map((item) => item.path)).toEqual([['entry', 0, 'changes', 0, 'value', 'metadata']]);
  });

  it('maps the readable items around an unreadable one, in order, and never puts its content in the problem', () => {
    const payload = fixture('batch');
    const value = payload.entry[0].changes[0].value;
    value.messages[1] = { from: 'secret-content-here', type: 'text', text: { body: 'secret-content-here' } };
    value.statuses = [...(value.statuses ?? []), 42];
    const { events, invalid } = mapAll(payload);
    expect(events.map((event) => event.dedupeKey)).toEqual([
      'wamid.BATCH.A1',
      'wamid.BATCH.A3',
      'wamid.BATCH.OUT1:sent',
      'wamid.BATCH.OUT1:delivered',
      'wamid.BATCH.B1',
      'wamid.BATCH.OUT1:read',
      'wamid.BATCH.OUT3:failed',
    ]);
    expect(invalid.map((item) => item.path.slice(0, 7))).toEqual([
      ['entry', 0, 'changes', 0, 'value', 'messages', 1],
      ['entry', 0, 'changes', 0, 'value', 'statuses', value.statuses.length - 1],
    ]);
    expect(JSON.stringify(invalid)).not.toContain('secret-content-here');
  });

  it('drops an unreadable contact (only its name is lost)', () => {
    const payload = fixture('text');
    payload.entry[0].changes[0].value.contacts = ['not a contact', { wa_id: 16505551234 }];
    expect(mapOne(payload).data.contact).toEqual({ phone: '16505551234', name: null });
  });

  it('rejects messages that is not an array', () => {
    const payload = fixture('text');
    payload.entry[0].changes[0].value.messages = { id: 'x' };
    expectPayloadError(payload, ['entry', 0, 'changes', 0, 'value', 'messages']);
  });
});
