/**
 * "A new channel is one folder and one line" (README, Recipe: add a channel). A channel module
 * written here, and added to PROVIDERS as that one line adds it, is accepted by the admin API
 * and TRIGGERS_FILE's schema, kept with its secrets sealed or hashed, shown without them,
 * served on /api/channels/<name>/{channelId}, and described by the route table and the
 * OpenAPI document, with no other file changed.
 */
import { createHash } from 'node:crypto';
import { compileErrors, validate } from '@readme/openapi-parser';
import request from 'supertest';
import type * as ChannelRecordModule from '../../src/providers/channel-record';
import type { ChatMapping } from '../../src/providers/chat-event';
import type { Provider } from '../../src/providers/provider';
import type * as RegistryModule from '../../src/providers/registry';
import type * as TokenCheck from '../../src/providers/schemes/token-check';
import type * as Document from '../../src/routes/openapi-document';
import type * as Records from '../../src/registry/records';
import type * as Schemas from '../../src/registry/schemas';
import type * as Table from '../../src/routes/table';
import type * as Fields from '../../src/registry/secret-fields';
import type * as AppHelper from '../helpers/app';

const HEADER = 'x-fake-chat-token';
const BOT_TOKEN = 'fake-chat-bot-token';
const VERIFY_TOKEN = 'fake-chat-verify-token';

/** The module a new channel's folder would hold (index.ts, chat.ts, channel.ts), in one piece. */
function fakeChatModule(): Provider {
  const { z } = jest.requireActual<typeof import('zod')>('zod');
  const { channelBase } = jest.requireActual<typeof ChannelRecordModule>('../../src/providers/channel-record');
  const { tokenScheme } = jest.requireActual<typeof TokenCheck>('../../src/providers/schemes/token-check');
  const input = z.strictObject({
    provider: z.literal('fakechat'),
    ...channelBase,
    botToken: z.string().min(1).max(256),
    verifyToken: z.string().min(1).max(256),
  });
  return {
    name: 'fakechat',
    title: 'Fake chat (a channel written by a test)',
    verifies: `${HEADER} equals the bot token`,
    deliveryIdSource: 'body id',
    signatureHeaders: () => [HEADER],
    ...tokenScheme(HEADER),
    bodyKind: () => 'json',
    kind: () => 'message',
    deliveryId: (_headers, body) => String((body as { id?: unknown }).id),
    chat: {
      channel: 'fakechat' as never,
      dedupePrefix: 'fc',
      describes: 'Fake chat update',
      record: { input, secrets: { botToken: 'sealed', verifyToken: 'hashed' } },
      api: {
        title: 'FakeChat',
        security: { scheme: 'fakeChatToken', header: HEADER, description: "the channel's botToken" },
        post: { summary: 'A fake chat update', description: 'Sent by the test.', content: { 'application/json': { schema: { type: 'object' } } } },
      },
      credentials: (channel) => ({ secrets: [(channel as unknown as { botToken: string }).botToken], options: {} }),
      map(payload, ref): ChatMapping {
        const { id, from, text } = payload as { id: string; from: string; text: string };
        return {
          events: [
            {
              type: 'chat.message',
              subject: from,
              dedupeKey: id,
              data: { workspaceId: ref.workspaceId, inboxId: ref.inboxId, channelId: ref.channelId, provider: 'fakechat', messageId: id, text },
            },
          ],
          invalid: [],
          foreign: 0,
          ignored: 0,
        };
      },
    },
  };
}

interface Loaded {
  schemas: typeof Schemas;
  records: typeof Records;
  fields: typeof Fields;
  table: typeof Table;
  document: typeof Document;
  helper: typeof AppHelper;
}

/** The gateway's modules as they load with the channel's one line in PROVIDERS. */
function loadWithFakeChannel(): Loaded {
  let loaded: Loaded | undefined;
  jest.isolateModules(() => {
    jest.doMock('../../src/providers/registry', () => {
      const actual = jest.requireActual<typeof RegistryModule>('../../src/providers/registry');
      const PROVIDERS = [...actual.PROVIDERS, fakeChatModule()];
      return {
        PROVIDERS,
        PROVIDER_NAMES: PROVIDERS.map((provider) => provider.name),
        providerNamed: (name: string) => PROVIDERS.find((provider) => provider.name === name),
      };
    });
    loaded = {
      schemas: require('../../src/registry/schemas'),
      records: require('../../src/registry/records'),
      fields: require('../../src/registry/secret-fields'),
      table: require('../../src/routes/table'),
      document: require('../../src/routes/openapi-document'),
      helper: require('../helpers/app'),
    };
  });
  // The one line is for the modules above only.
  jest.dontMock('../../src/providers/registry');
  return loaded!;
}

const input = { provider: 'fakechat', workspaceId: 'ws_1', inboxId: 'in_1', botToken: BOT_TOKEN, verifyToken: VERIFY_TOKEN };

describe('a channel module added to PROVIDERS with one line', () => {
  const m = loadWithFakeChannel();

  it('its record is one of the channel inputs the admin API and TRIGGERS_FILE accept, unknown keys refused', () => {
    expect(m.schemas.channelInputSchema.parse(input)).toEqual(input);
    expect(m.schemas.channelInputSchema.safeParse({ ...input, extra: 1 }).success).toBe(false);
    expect(m.schemas.channelInputSchema.safeParse({ ...input, botToken: undefined }).success).toBe(false);
  });

  it('its secrets are kept as it says: the sealed one among SECRET_FIELDS, the hashed one only as its hash', () => {
    expect(m.fields.SECRET_FIELDS.channels).toEqual(expect.arrayContaining(['botToken', 'appSecret', 'authToken', 'secretToken']));
    expect(m.fields.SECRET_FIELDS.channels).not.toContain('verifyToken');
    const stored = m.records.toStoredChannel(input as never) as unknown as Record<string, unknown>;
    expect(stored).toMatchObject({ provider: 'fakechat', botToken: BOT_TOKEN, verifyTokenHash: createHash('sha256').update(VERIFY_TOKEN).digest('hex') });
    expect(stored).not.toHaveProperty('verifyToken');
  });

  it('a read shows it without a secret or a hash, with <name>Set instead', () => {
    const stored = m.records.toStoredChannel(input as never);
    const shown = m.records.publicChannel('fc-1', stored, 'https://hooks.example.com/');
    expect(shown).toEqual({
      channelId: 'fc-1',
      url: 'https://hooks.example.com/api/channels/fakechat/fc-1',
      provider: 'fakechat',
      workspaceId: 'ws_1',
      inboxId: 'in_1',
      updatedAt: (stored as { updatedAt: string }).updatedAt,
      botTokenSet: true,
      verifyTokenSet: true,
    });
  });

  it('the route table holds its POST (no GET: its sender has no GET handshake), with its security scheme', () => {
    const routes = m.table.ROUTES.filter((route) => route.path === '/api/channels/fakechat/{channelId}');
    expect(routes.map((route) => [route.method, route.operationId, route.security, route.description])).toEqual([
      ['post', 'receiveFakeChat', 'fakeChatToken', 'Other methods: 405. Sent by the test.'],
    ]);
    expect(routes[0].reasons).toEqual(expect.arrayContaining(['signature_missing', 'signature_invalid', 'body_too_complex']));
  });

  it('the OpenAPI document describes its record, its read, its route and its scheme, and stays valid', async () => {
    const doc = m.document.openApiDocument() as any;
    const schemas = doc.components.schemas;
    expect(schemas.FakeChatChannelInput.required).toEqual(['provider', 'workspaceId', 'inboxId', 'botToken', 'verifyToken']);
    expect(Object.keys(schemas.FakeChatChannel.properties)).toEqual(['provider', 'workspaceId', 'inboxId', 'channelId', 'url', 'updatedAt', 'botTokenSet', 'verifyTokenSet']);
    expect(schemas.ChannelInput.oneOf).toContainEqual({ $ref: '#/components/schemas/FakeChatChannelInput' });
    expect(schemas.Channel.oneOf).toContainEqual({ $ref: '#/components/schemas/FakeChatChannel' });
    expect(doc.components.securitySchemes.fakeChatToken).toEqual({ type: 'apiKey', in: 'header', name: 'X-Fake-Chat-Token', description: "the channel's botToken" });
    expect(doc.paths['/api/channels/fakechat/{channelId}'].post.security).toEqual([{ fakeChatToken: [] }]);
    const result = await validate(structuredClone(doc));
    if (!result.valid) throw new Error(compileErrors(result));
  });

  it('is registered through the admin API and served: a wrong token is refused, a right one published as a chat event', async () => {
    const t = m.helper.testApp({ PUBLIC_BASE_URL: 'https://hooks.example.com' });
    const auth = { Authorization: `Bearer ${m.helper.ADMIN_TOKEN}` };
    const put = await request(t.admin).put('/admin/channels/fc-1').set(auth).send(input);
    expect(put.status).toBe(200);
    expect(put.body.data).toMatchObject({ provider: 'fakechat', botTokenSet: true, verifyTokenSet: true });
    expect(JSON.stringify(put.body)).not.toContain(BOT_TOKEN);

    const update = JSON.stringify({ id: 'm-1', from: '42', text: 'hello' });
    const refused = await request(t.app).post('/api/channels/fakechat/fc-1').set(HEADER, 'wrong').set('Content-Type', 'application/json').send(update);
    expect(refused.status).toBe(401);
    expect(t.sink.records).toHaveLength(0);

    const res = await request(t.app).post('/api/channels/fakechat/fc-1').set(HEADER, BOT_TOKEN).set('Content-Type', 'application/json').send(update);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: 1, published: 1, duplicates: 0, foreign: 0, invalid: 0, ignored: 0 });
    expect(t.sink.records).toHaveLength(1);
    const event = JSON.parse(String(t.sink.records[0].value));
    expect(event).toMatchObject({ type: 'chat.message', data: { provider: 'fakechat', channelId: 'fc-1', text: 'hello' } });

    const get = await request(t.app).get('/api/channels/fakechat/fc-1');
    expect(get.status).toBe(405);
  });
});

describe('every channel module of PROVIDERS', () => {
  const { CHAT_SENDERS } = jest.requireActual<typeof import('../../src/providers/channels')>('../../src/providers/channels');

  it.each(CHAT_SENDERS.map((sender) => [sender.chat.channel, sender] as const))(
    '%s: its record is of its channel, declares each secret it keeps, and documents the header its sender checks',
    (channel, sender) => {
      const { input, secrets } = sender.chat.record;
      expect((input.shape.provider as unknown as { value: string }).value).toBe(channel);
      for (const name of Object.keys(secrets)) expect(`${name}: ${input.shape[name] !== undefined}`).toBe(`${name}: true`);
      expect(sender.signatureHeaders({})).toContain(sender.chat.api.security.header);
    },
  );

  it('are listed once each, whatsapp, twilio, telegram', () => {
    expect(CHAT_SENDERS.map((sender) => sender.chat.channel)).toEqual(['whatsapp', 'twilio', 'telegram']);
  });
});
