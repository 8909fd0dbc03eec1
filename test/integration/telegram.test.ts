/**
 * The built gateway (dist/main.js) in embedded mode: a Telegram channel from TRIGGERS_FILE,
 * updates posted with and without the secret, the file sink checked line by line (contract §11).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGateway, type RunningGateway } from '../helpers/server';

const CHANNEL_ID = 'ch_tg_int';
const SECRET = 'integration-telegram-secret_0123';
const fixture = (name: string) => readFileSync(join(__dirname, '..', 'fixtures', 'telegram', `${name}.json`), 'utf8');

describe('Telegram channel in the built gateway (embedded mode)', () => {
  let dir: string;
  let eventsDir: string;
  let gateway: RunningGateway;

  const chatLines = () => {
    const file = join(eventsDir, 'chat.inbound.ndjson');
    if (!existsSync(file)) return [];
    return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
  };

  const post = (body: string, secret = SECRET) =>
    fetch(`${gateway.url}/api/channels/telegram/${CHANNEL_ID}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Telegram-Bot-Api-Secret-Token': secret },
      body,
    });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'igw-telegram-'));
    eventsDir = join(dir, 'events');
    const triggersFile = join(dir, 'registry.json');
    writeFileSync(
      triggersFile,
      JSON.stringify({
        channels: {
          [CHANNEL_ID]: { provider: 'telegram', workspaceId: 'ws_int', inboxId: 'inbox_int', botId: '7000000001', secretToken: SECRET },
        },
      }),
    );
    gateway = await startGateway({ TRIGGERS_FILE: triggersFile, EVENTS_DIR: eventsDir });
  });

  afterAll(async () => {
    await gateway?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses an update without the right secret with 401 and writes nothing', async () => {
    const res = await post(fixture('text'), 'not-the-secret-0123456789');
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('UNAUTHORIZED');
    expect(chatLines()).toHaveLength(0);
  });

  it('writes a message and a tap to chat.inbound.ndjson once each, and nothing for a redelivery', async () => {
    for (const name of ['text', 'callback-query']) {
      const res = await post(fixture(name));
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ received: 1, published: 1, duplicates: 0, foreign: 0, invalid: 0, ignored: 0 });
    }
    const again = await post(fixture('callback-query'));
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ published: 0, duplicates: 1 });
    const ignored = await post(fixture('inline-query'));
    expect(await ignored.json()).toMatchObject({ published: 0, ignored: 1 });

    const lines = chatLines();
    expect(lines.map((l) => l.value.type)).toEqual(['chat.message', 'chat.tap']);
    for (const line of lines) {
      expect(line.topic).toBe('chat.inbound');
      expect(line.key).toBe(`${CHANNEL_ID}:1111111`);
      expect(line.headers).toEqual({
        'content-type': 'application/cloudevents+json',
        ce_type: line.value.type,
        ce_id: line.value.id,
        traceparent: line.value.traceparent,
      });
      expect(line.value).toMatchObject({
        specversion: '1.0',
        source: `/api/channels/telegram/${CHANNEL_ID}`,
        subject: '1111111',
        data: { workspaceId: 'ws_int', inboxId: 'inbox_int', channelId: CHANNEL_ID, provider: 'telegram' },
      });
    }
    expect(lines[1].value.data).toMatchObject({ value: 'slot-1400', replyTo: '1410', message: { content: 'Tomorrow 14:00' } });
    expect(gateway.output()).not.toContain(SECRET);
  });
});
