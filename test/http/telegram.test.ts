import { readFileSync } from 'node:fs';
import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import request from 'supertest';
import type { TelegramChannelInput } from '../../src/registry/schemas';
import { testApp } from '../helpers/app';
import { expectError } from '../helpers/http';

const CHANNEL_ID = 'ch_tg_1';
const SECRET = 'telegram-secret_token-for-tests';
const URL = `/api/channels/telegram/${CHANNEL_ID}`;
const HEADER = 'X-Telegram-Bot-Api-Secret-Token';

const channelInput: TelegramChannelInput = { provider: 'telegram', workspaceId: 'ws_1', inboxId: 'inbox_1', secretToken: SECRET };

type TestApp = ReturnType<typeof testApp>;

function fixture(name: string): string {
  return readFileSync(join(__dirname, '..', 'fixtures', 'telegram', `${name}.json`), 'utf8');
}

/** `secret: null` sends no secret header at all. */
function post(t: TestApp, body: string, secret: string | null = SECRET, url = URL) {
  const req = request(t.app).post(url).set('Content-Type', 'application/json');
  if (secret !== null) req.set(HEADER, secret);
  return req.send(body);
}

/** A text update with this update_id. */
function textUpdate(updateId: number, text = 'hello'): string {
  const update = JSON.parse(fixture('text'));
  update.update_id = updateId;
  update.message.text = text;
  return JSON.stringify(update);
}

async function freshApp(env: Record<string, string> = {}): Promise<TestApp> {
  const t = testApp(env);
  await t.addChannel(CHANNEL_ID, channelInput);
  return t;
}

async function logFor(t: TestApp, path: string): Promise<string> {
  for (let i = 0; i < 100; i++) {
    if (t.logLines.some((line) => line.includes(`"path":"${path}"`))) return t.logLines.join('');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`no access log line for ${path}`);
}

describe('Telegram updates (contract §11)', () => {
  it('publishes a message as chat.message on TOPIC_CHAT, keyed by channel and chat id', async () => {
    const t = await freshApp();
    const res = await post(t, fixture('text'));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: 1, published: 1, duplicates: 0, foreign: 0, invalid: 0, ignored: 0 });
    expect(t.sink.records).toHaveLength(1);
    const [record] = t.sink.records;
    expect(record.topic).toBe('chat.inbound');
    expect(record.key).toBe(`${CHANNEL_ID}:1111111`);
    expect(record.headers).toMatchObject({ 'content-type': 'application/cloudevents+json', ce_type: 'chat.message' });
    const [event] = t.sink.events();
    expect(event).toMatchObject({
      specversion: '1.0',
      source: `/api/channels/telegram/${CHANNEL_ID}`,
      type: 'chat.message',
      subject: '1111111',
      data: {
        workspaceId: 'ws_1',
        inboxId: 'inbox_1',
        channelId: CHANNEL_ID,
        provider: 'telegram',
        messageId: '1365',
        contact: { id: '1111111', phone: null, name: 'Test Firstname Test Lastname', username: 'Testusername' },
        message: { content: '/start', contentType: 'text' },
      },
    });
  });

  it('publishes a tap on an inline keyboard as chat.tap with the button text and the keyboard message', async () => {
    const t = await freshApp();
    expect((await post(t, fixture('callback-query'))).status).toBe(200);
    const [event] = t.sink.events();
    expect(event.type).toBe('chat.tap');
    expect(event.data).toMatchObject({ value: 'slot-1400', replyTo: '1410', message: { content: 'Tomorrow 14:00' } });
    // A callback query carries no time of its own: the time the gateway received it (contract §4).
    expect(event.data.timestamp).toBe(event.time);
  });

  it('publishes an update delivered twice once; the second still gets 200', async () => {
    const t = await freshApp();
    expect((await post(t, fixture('text'))).status).toBe(200);
    const again = await post(t, fixture('text'));
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ published: 0, duplicates: 1 });
    expect(t.sink.records).toHaveLength(1);
  });

  it('acknowledges and counts an update kind that is not a chat event, publishing nothing', async () => {
    const t = await freshApp();
    const res = await post(t, fixture('inline-query'));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ received: 0, published: 0, ignored: 1 });
    expect(t.sink.writes).toBe(0);
    const metrics = await request(t.admin).get('/metrics');
    expect(metrics.text).toMatch(/^igw_chat_items_skipped_total\{provider="telegram",reason="ignored"\} 1$/m);
  });

  it('acknowledges an unreadable message (a retry cannot mend it) and counts it', async () => {
    const t = await freshApp();
    const update = JSON.parse(fixture('text'));
    delete update.message.chat;
    const res = await post(t, JSON.stringify(update));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ published: 0, invalid: 1 });
    expect(t.sink.records).toHaveLength(0);
  });

  it.each([
    ['malformed JSON', '{"update_id":1,"message":'],
    ['a body that is not an update', '{"ok":true}'],
    ['an empty body', ''],
  ])('answers 400 for %s with the right secret', async (_label, body) => {
    const t = await freshApp();
    expectError(await post(t, body), 'BAD_REQUEST');
    expect(t.sink.records).toHaveLength(0);
  });

  it.each([
    ['missing', null, 'signature_missing'],
    ['wrong', 'telegram-secret_token-for-testz', 'signature_invalid'],
    ['of another channel', 'another-channel-secret-0123', 'signature_invalid'],
  ])('answers 401 for a %s secret header and publishes nothing', async (_label, secret, reason) => {
    const t = await freshApp();
    const res = await post(t, fixture('text'), secret);
    expect(expectError(res, 'UNAUTHORIZED').details).toEqual({ reason });
    expect(t.sink.records).toHaveLength(0);
  });

  it('checks the secret before reading the body: a forger gets 401 while its body is still unsent', async () => {
    const t = await freshApp();
    const server: Server = t.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpRequest({
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: URL,
          headers: { 'content-type': 'application/json', 'content-length': '1000', [HEADER]: 'a-forged-secret-value-0000' },
        });
        req.on('response', (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
          req.destroy();
        });
        req.on('error', reject);
        req.write('{"update_id":'); // 13 of the 1000 bytes announced; the rest never comes
      });
      expect(status).toBe(401);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('spends no quota on a wrong secret: 401s do not count against the channel limit', async () => {
    const t = await freshApp({ RATE_LIMIT_DEFAULT: '1/60' });
    for (let i = 0; i < 3; i++) expectError(await post(t, textUpdate(i), 'a-wrong-secret-0123456789'), 'UNAUTHORIZED');
    const ok = await post(t, textUpdate(10));
    expect(ok.status).toBe(200);
    expect(ok.headers['x-ratelimit-limit']).toBe('1');
    expect(ok.headers['x-ratelimit-remaining']).toBe('0');
    expectError(await post(t, textUpdate(11)), 'RATE_LIMITED');
  });

  it('answers 404 for an unknown channel and for a channel of another provider, even with the right secret', async () => {
    const t = await freshApp();
    await t.addChannel('ch_wa', {
      provider: 'whatsapp',
      workspaceId: 'ws_1',
      inboxId: 'inbox_1',
      phoneNumberId: '123',
      verifyToken: 'v',
      appSecret: SECRET,
    });
    expectError(await post(t, fixture('text'), SECRET, '/api/channels/telegram/nope'), 'NOT_FOUND');
    expectError(await post(t, fixture('text'), SECRET, '/api/channels/telegram/ch_wa'), 'NOT_FOUND');
    expectError(await post(t, fixture('text'), SECRET, '/api/channels/telegram/bad.id'), 'NOT_FOUND');
    // And the Telegram channel is unknown on the WhatsApp route.
    expectError(await request(t.app).get(`/api/channels/whatsapp/${CHANNEL_ID}`), 'NOT_FOUND');
  });

  it.each(['get', 'put', 'delete'] as const)('answers %s with 405 and Allow: POST, known channel or not', async (method) => {
    const t = await freshApp();
    const known = await request(t.app)[method](URL);
    const unknown = await request(t.app)[method]('/api/channels/telegram/nope');
    expectError(known, 'METHOD_NOT_ALLOWED');
    expect(known.headers.allow).toBe('POST');
    expect(unknown.body).toEqual(known.body);
  });

  it('answers 413 for a body over MAX_BODY_BYTES', async () => {
    const t = await freshApp({ MAX_BODY_BYTES: '2048' });
    expectError(await post(t, textUpdate(1, 'x'.repeat(4096))), 'PAYLOAD_TOO_LARGE');
    expect(t.sink.records).toHaveLength(0);
  });

  it('answers 503 with Retry-After when the sink fails, and the retry after recovery publishes the update', async () => {
    const t = await freshApp();
    t.sink.mode = 'fail';
    const failed = await post(t, fixture('text'));
    expectError(failed, 'SERVICE_UNAVAILABLE');
    expect(failed.headers['retry-after']).toMatch(/^\d+$/);
    t.sink.mode = 'ack';
    const retried = await post(t, fixture('text'));
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ published: 1, duplicates: 0 });
  });

  it('never puts the secret into records or logs', async () => {
    const t = await freshApp();
    await post(t, fixture('text'));
    await post(t, fixture('text'), 'a-wrong-secret-0123456789');
    const log = await logFor(t, URL);
    const records = JSON.stringify(t.sink.records);
    for (const secret of [SECRET, 'a-wrong-secret-0123456789']) {
      expect(records).not.toContain(secret);
      expect(log).not.toContain(secret);
    }
    expect(records.toLowerCase()).not.toContain('x-telegram-bot-api-secret-token');
    expect(log).toContain('"route":"telegram"');
  });
});
