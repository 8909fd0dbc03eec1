/**
 * Issue 9 item 7 through the built gateway on the real Redis: with SECRETS_KEY the channel's
 * appSecret is sealed in Redis and still verifies signatures; a channel whose secret was sealed
 * under a key the gateway does not have answers 503 `secret_unreadable` (and is logged), never
 * 401 or 200 with a wrong secret.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type Redis from 'ioredis';
import { signWhatsAppBody } from '../helpers/meta-signature';
import { toStoredChannel } from '../../src/registry/records';
import { RedisRegistry } from '../../src/registry/redis';
import { RedisConnection } from '../../src/redis/connection';
import { keyId, SecretsCipher } from '../../src/secrets/cipher';
import { REDIS_TEST_URL, deleteKeys, requireRedis, silentLogger, uniquePrefix } from '../helpers/redis';
import { startGateway, type RunningGateway } from '../helpers/server';
import { tempDir } from '../helpers/tmp';
import { readyConnection } from '../helpers/redis-setups';

const KEY = randomBytes(32);
const OTHER_KEY = randomBytes(32);
const BATCH = readFileSync(join(__dirname, '..', 'fixtures', 'whatsapp', 'batch.json'));
const channelInput = (appSecret: string) => ({
  provider: 'whatsapp' as const,
  workspaceId: 'ws-sealed',
  inboxId: 'inbox-sealed',
  phoneNumberId: '106540352242922',
  verifyToken: 'sealed-verify-token',
  appSecret,
});

describe('secrets at rest through the built gateway', () => {
  let admin: Redis;
  let gateway: RunningGateway;
  const prefix = uniquePrefix('gw-sealed');
  const tmp = tempDir();

  beforeAll(async () => {
    admin = await requireRedis();
    // Sealed under a key this gateway will not have (e.g. written before a botched rotation).
    const connection = new RedisConnection({ target: REDIS_TEST_URL, timeoutMs: 1000 }, silentLogger());
    await readyConnection(connection);
    const foreign = new RedisRegistry(connection, prefix, silentLogger(), { cipher: new SecretsCipher(OTHER_KEY) });
    await foreign.channels.put('wa-foreign', toStoredChannel(channelInput('foreign-app-secret')));
    await foreign.close();
    await connection.close();

    const triggersFile = join(tmp.dir, 'registry.json');
    writeFileSync(triggersFile, JSON.stringify({ triggers: {}, channels: { 'wa-sealed': channelInput('sealed-app-secret') } }));
    gateway = await startGateway({
      REDIS_URL: REDIS_TEST_URL,
      REDIS_PREFIX: prefix,
      SECRETS_KEY: KEY.toString('base64'),
      TRIGGERS_FILE: triggersFile,
      EVENTS_DIR: join(tmp.dir, 'events'),
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    if (admin) {
      await deleteKeys(admin, prefix);
      admin.disconnect();
    }
    tmp.cleanup();
  });

  const post = (channelId: string, secret: string) =>
    fetch(`${gateway.url}/api/channels/whatsapp/${channelId}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Hub-Signature-256': signWhatsAppBody(BATCH, secret) },
      body: BATCH,
    });

  it('keeps the appSecret sealed in Redis and verifies signatures with it', async () => {
    const raw = (await admin.hget(`${prefix}registry:channels`, 'wa-sealed')) ?? '';
    expect(raw).not.toContain('sealed-app-secret');
    expect(JSON.parse(raw).appSecret.kid).toBe(keyId(KEY));
    expect((await post('wa-sealed', 'sealed-app-secret')).status).toBe(200);
    expect((await post('wa-sealed', 'some-other-secret')).status).toBe(401);
  });

  it('answers 503 secret_unreadable for a channel sealed under an unknown key, and logs it', async () => {
    const res = await post('wa-foreign', 'foreign-app-secret');
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
    const body = (await res.json()) as { error: { code: string; details: { reason: string } } };
    expect(body.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { reason: 'secret_unreadable' } });
    await gateway.waitForOutput(`"kid":"${keyId(OTHER_KEY)}"`);
    expect(gateway.output()).toMatch(/"level":"error"[^\n]*"id":"wa-foreign"/);
    expect(gateway.output()).not.toContain('foreign-app-secret');
    expect(gateway.output()).not.toContain('sealed-app-secret');
  });
});
