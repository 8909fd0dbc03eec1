import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import twilio from 'twilio';
import type { ChannelInput } from '../../src/registry/schemas';
import { testApp } from '../helpers/app';

/** Contract §5: chat dedupe keys are scoped by workspace and channel identity. */

const fixture = (dir: string, name: string) => readFileSync(join(__dirname, '..', 'fixtures', dir, name), 'utf8');

describe('a Telegram channel id registered again', () => {
  const SECRET = 'telegram-secret-dedupe-scope';
  const update = fixture('telegram', 'text.json');
  const t = testApp();
  const register = (botId: string, workspaceId = 'ws_1') =>
    t.addChannel('ch_tg', { provider: 'telegram', workspaceId, inboxId: 'in_1', botId, secretToken: SECRET } satisfies ChannelInput);
  const post = () =>
    request(t.app).post('/api/channels/telegram/ch_tg').set('Content-Type', 'application/json').set('X-Telegram-Bot-Api-Secret-Token', SECRET).send(update);

  it('for the same bot keeps its dedupe; for another bot or workspace starts afresh', async () => {
    await register('111');
    expect((await post()).body).toMatchObject({ published: 1, duplicates: 0 });
    expect((await post()).body).toMatchObject({ published: 0, duplicates: 1 });

    await register('111');
    expect((await post()).body).toMatchObject({ published: 0, duplicates: 1 });

    // Another bot behind the same channel id: its update_id 1 is not the old bot's.
    await register('222');
    expect((await post()).body).toMatchObject({ published: 1, duplicates: 0 });

    await register('222', 'ws_2');
    expect((await post()).body).toMatchObject({ published: 1, duplicates: 0 });
    expect(t.sink.records).toHaveLength(3);
  });
});

describe('a Twilio channel id registered again for another account', () => {
  const PUBLIC = 'https://hooks.example.com';
  const PATH = '/api/channels/twilio/ch_tw';
  const AUTH_TOKEN = 'twilio-auth-token-dedupe-scope';
  const t = testApp({ PUBLIC_BASE_URL: PUBLIC });
  const register = (accountSid: string) =>
    t.addChannel('ch_tw', { provider: 'twilio', workspaceId: 'ws_1', inboxId: 'in_1', accountSid, authToken: AUTH_TOKEN });
  const post = (accountSid: string) => {
    const form = fixture('twilio', 'sms-inbound.form').replace(/AccountSid=[^&]*/, `AccountSid=${accountSid}`);
    const signature = twilio.getExpectedTwilioSignature(AUTH_TOKEN, PUBLIC + PATH, Object.fromEntries(new URLSearchParams(form)));
    return request(t.app).post(PATH).set('Content-Type', 'application/x-www-form-urlencoded').set('X-Twilio-Signature', signature).send(form);
  };

  it('publishes the new account\'s message even when the old one saw the same MessageSid', async () => {
    const first = 'AC0123456789abcdef0123456789abcdef';
    const second = 'ACfedcba9876543210fedcba9876543210';
    await register(first);
    expect((await post(first)).status).toBe(200);
    expect((await post(first)).status).toBe(200);
    expect(t.sink.records).toHaveLength(1);

    await register(second);
    expect((await post(second)).status).toBe(200);
    expect(t.sink.records).toHaveLength(2);
  });
});
