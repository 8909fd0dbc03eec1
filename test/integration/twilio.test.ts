/**
 * The built gateway (dist/main.js) with the registry and the dedupe in the real Redis and the
 * file sink: a Twilio channel from TRIGGERS_FILE, callbacks signed by the twilio package for
 * PUBLIC_BASE_URL, the file sink checked line by line (contract §11).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Redis from 'ioredis';
import twilio from 'twilio';
import { REDIS_TEST_URL, deleteKeys, requireRedis, uniquePrefix } from '../helpers/redis';
import { startGateway, type RunningGateway } from '../helpers/server';

const CHANNEL_ID = 'ch_tw_int';
const ACCOUNT_SID = 'AC0123456789abcdef0123456789abcdef';
const AUTH_TOKEN = 'integration-twilio-auth-token';
const PUBLIC = 'https://hooks.example.com';
const PATH = `/api/channels/twilio/${CHANNEL_ID}`;
const fixture = (name: string) => readFileSync(join(__dirname, '..', 'fixtures', 'twilio', `${name}.form`), 'utf8');

describe('Twilio channel in the built gateway (Redis registry and dedupe, file sink)', () => {
  let dir: string;
  let eventsDir: string;
  let gateway: RunningGateway;
  let redis: Redis;
  const prefix = uniquePrefix('twilio');

  const chatLines = () => {
    const file = join(eventsDir, 'chat.inbound.ndjson');
    if (!existsSync(file)) return [];
    return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
  };

  const post = (form: string, signature = twilio.getExpectedTwilioSignature(AUTH_TOKEN, PUBLIC + PATH, Object.fromEntries(new URLSearchParams(form)))) =>
    fetch(gateway.url + PATH, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Twilio-Signature': signature },
      body: form,
    });

  beforeAll(async () => {
    redis = await requireRedis();
    dir = mkdtempSync(join(tmpdir(), 'igw-twilio-'));
    eventsDir = join(dir, 'events');
    const triggersFile = join(dir, 'registry.json');
    writeFileSync(
      triggersFile,
      JSON.stringify({
        channels: { [CHANNEL_ID]: { provider: 'twilio', workspaceId: 'ws_int', inboxId: 'inbox_int', accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN } },
      }),
    );
    gateway = await startGateway({
      TRIGGERS_FILE: triggersFile,
      EVENTS_DIR: eventsDir,
      REDIS_URL: REDIS_TEST_URL,
      REDIS_PREFIX: prefix,
      PUBLIC_BASE_URL: PUBLIC,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    if (redis) {
      await deleteKeys(redis, prefix);
      redis.disconnect();
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a forged callback with 401 and writes nothing', async () => {
    const res = await post(fixture('sms-inbound'), 'Zm9yZ2Vk');
    expect(res.status).toBe(401);
    expect(chatLines()).toHaveLength(0);
  });

  it('writes a message, a tap and a status once each, answers empty TwiML, and drops the redeliveries', async () => {
    for (const name of ['whatsapp-inbound', 'whatsapp-button', 'status-failed-whatsapp', 'whatsapp-button']) {
      const res = await post(fixture(name));
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/xml/);
      expect(await res.text()).toBe('<Response></Response>');
    }
    const lines = chatLines();
    expect(lines.map((l) => l.value.type)).toEqual(['chat.message', 'chat.tap', 'chat.status']);
    for (const line of lines) {
      expect(line.topic).toBe('chat.inbound');
      expect(line.key).toBe(`${CHANNEL_ID}:447700900123`);
      expect(line.value).toMatchObject({
        source: `/api/channels/twilio/${CHANNEL_ID}`,
        subject: '447700900123',
        data: { workspaceId: 'ws_int', inboxId: 'inbox_int', channelId: CHANNEL_ID, provider: 'twilio', channelType: 'whatsapp' },
      });
    }
    expect(lines[1].value.data).toMatchObject({ value: 'slot-1400', message: { content: 'Tomorrow 14:00' } });
    expect(lines[2].value.data).toMatchObject({ status: 'failed', errors: [{ code: 63016 }] });
    // The dedupe lives in Redis, under this gateway's prefix.
    expect(await redis.keys(`${prefix}*tw:ws_int:${ACCOUNT_SID}:${CHANNEL_ID}:*`)).not.toHaveLength(0);
    expect(gateway.output()).not.toContain(AUTH_TOKEN);
  });
});
