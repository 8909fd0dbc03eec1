/**
 * The built gateway (dist/main.js) in embedded mode: a WhatsApp channel from TRIGGERS_FILE,
 * a signed batch delivered twice, the file sink checked line by line (contract §3, §4).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signWhatsAppBody } from '../helpers/meta-signature';
import { startGateway, type RunningGateway } from '../helpers/server';

const CHANNEL_ID = 'ch_wa_int';
const APP_SECRET = 'integration-app-secret';
const VERIFY_TOKEN = 'integration-verify-token';
const BATCH = readFileSync(join(__dirname, '..', 'fixtures', 'whatsapp', 'batch.json'));

describe('WhatsApp channel in the built gateway (embedded mode)', () => {
  let dir: string;
  let eventsDir: string;
  let gateway: RunningGateway;

  const chatLines = () => {
    const file = join(eventsDir, 'chat.inbound.ndjson');
    if (!existsSync(file)) return [];
    return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
  };

  const post = (body: Buffer, signature = signWhatsAppBody(body, APP_SECRET)) =>
    fetch(`${gateway.url}/api/channels/whatsapp/${CHANNEL_ID}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Hub-Signature-256': signature },
      body,
    });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'igw-whatsapp-'));
    eventsDir = join(dir, 'events');
    const triggersFile = join(dir, 'registry.json');
    writeFileSync(
      triggersFile,
      JSON.stringify({
        triggers: {},
        channels: {
          [CHANNEL_ID]: {
            provider: 'whatsapp',
            workspaceId: 'ws_int',
            inboxId: 'inbox_int',
            phoneNumberId: '106540352242922',
            verifyToken: VERIFY_TOKEN,
            appSecret: APP_SECRET,
          },
        },
      }),
    );
    gateway = await startGateway({ TRIGGERS_FILE: triggersFile, EVENTS_DIR: eventsDir });
  });

  afterAll(async () => {
    await gateway?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers the verification handshake from the seeded channel', async () => {
    const query = new URLSearchParams({ 'hub.mode': 'subscribe', 'hub.verify_token': VERIFY_TOKEN, 'hub.challenge': '987654' });
    const res = await fetch(`${gateway.url}/api/channels/whatsapp/${CHANNEL_ID}?${query}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await res.text()).toBe('987654');
  });

  it('rejects a tampered delivery with 401 and writes nothing', async () => {
    const tampered = Buffer.from(BATCH);
    tampered[tampered.indexOf('Hello')] = 'J'.charCodeAt(0);
    const res = await post(tampered, signWhatsAppBody(BATCH, APP_SECRET));
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('UNAUTHORIZED');
    expect(chatLines()).toHaveLength(0);
  });

  it('writes the signed batch to chat.inbound.ndjson once, and nothing for the same POST again', async () => {
    const first = await post(BATCH);
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ received: 8, published: 8, duplicates: 0, foreign: 1, invalid: 0, ignored: 0 });

    const lines = chatLines();
    expect(lines).toHaveLength(8);
    expect(lines.map((l) => l.value.type)).toEqual([
      'chat.message',
      'chat.tap',
      'chat.message',
      'chat.status',
      'chat.status',
      'chat.tap',
      'chat.status',
      'chat.status',
    ]);
    for (const line of lines) {
      expect(Object.keys(line)).toEqual(['topic', 'key', 'headers', 'value']);
      expect(line.topic).toBe('chat.inbound');
      expect(line.key).toBe(`${CHANNEL_ID}:${line.value.subject}`);
      expect(line.headers).toEqual({
        'content-type': 'application/cloudevents+json',
        ce_type: line.value.type,
        ce_id: line.value.id,
        traceparent: line.value.traceparent,
      });
      expect(line.value).toMatchObject({
        specversion: '1.0',
        source: `/api/channels/whatsapp/${CHANNEL_ID}`,
        datacontenttype: 'application/json',
        data: { workspaceId: 'ws_int', inboxId: 'inbox_int', channelId: CHANNEL_ID, provider: 'whatsapp' },
      });
    }
    expect(lines[1].value.data).toMatchObject({ value: 'cancel-button', replyTo: 'wamid.BATCH.OUT1' });

    const again = await post(BATCH);
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ published: 0, duplicates: 8 });
    expect(chatLines()).toHaveLength(8);

    const metrics = await (await fetch(`${gateway.adminUrl}/metrics`)).text();
    expect(metrics).toMatch(/^igw_whatsapp_foreign_changes_total 2$/m);

    const output = gateway.output();
    expect(output).not.toContain(APP_SECRET);
    expect(output).not.toContain(VERIFY_TOKEN);
    expect(output).not.toContain('For the other number');
  });
});
