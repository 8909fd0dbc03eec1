/**
 * Issue 9 item 7: stored secrets sealed at rest in the real Redis with SECRETS_KEY, opened by
 * every process that has the key, still read when stored in clear before (migration), resealed
 * after a rotation, and refused loudly when no key of ours opens them.
 */
import { randomBytes } from 'node:crypto';
import type Redis from 'ioredis';
import { RedisRegistry } from '../../src/registry/redis';
import type { StoredChannel, StoredTrigger } from '../../src/registry/schemas';
import { RedisConnection } from '../../src/redis/connection';
import { keyId, SecretsCipher, SecretUnreadableError } from '../../src/secrets/cipher';
import { REDIS_TEST_URL, capturingLogger, deleteKeys, requireRedis, silentLogger, uniquePrefix } from '../helpers/redis';
import { readyConnection } from '../helpers/redis-setups';

const keyA = randomBytes(32);
const keyB = randomBytes(32);

const channel = (appSecret: string): StoredChannel => ({
  provider: 'whatsapp',
  workspaceId: 'ws-1',
  inboxId: 'in-1',
  phoneNumberId: '123',
  appSecret,
  verifyTokenHash: 'f'.repeat(64),
  updatedAt: '2025-01-01T00:00:00.000Z',
});

describe('secrets at rest in the Redis registry', () => {
  let admin: Redis;
  let prefix: string;
  const opened: Array<{ connection: RedisConnection; registry: RedisRegistry }> = [];

  async function open(cipher?: SecretsCipher, logger = silentLogger()): Promise<RedisRegistry> {
    const connection = new RedisConnection({ target: REDIS_TEST_URL, timeoutMs: 1000 }, logger);
    await readyConnection(connection);
    const registry = new RedisRegistry(connection, prefix, logger, { cipher });
    await registry.start();
    await registry.resealing;
    opened.push({ connection, registry });
    return registry;
  }

  const rawChannel = async (id: string) => (await admin.hget(`${prefix}registry:channels`, id)) ?? '';

  beforeEach(async () => {
    admin = await requireRedis();
    prefix = uniquePrefix('secrets');
  });

  afterEach(async () => {
    for (const { registry, connection } of opened.splice(0)) {
      await registry.close();
      await connection.close();
    }
    await deleteKeys(admin, prefix);
    admin.disconnect();
  });

  it('stores a channel\'s appSecret sealed with the key id, and another process with the key reads it in clear', async () => {
    const writer = await open(new SecretsCipher(keyA));
    await writer.channels.put('wa-1', channel('wa-app-secret-1'));
    const raw = await rawChannel('wa-1');
    expect(raw).not.toContain('wa-app-secret-1');
    expect(JSON.parse(raw).appSecret).toMatchObject({ $sealed: 'aes-256-gcm', kid: keyId(keyA) });
    expect(JSON.parse(raw).workspaceId).toBe('ws-1');

    const reader = await open(new SecretsCipher(keyA));
    await expect(reader.channels.get('wa-1')).resolves.toMatchObject({ appSecret: 'wa-app-secret-1' });
    const page = await reader.channels.list(10);
    expect(page.items[0].value).toMatchObject({ appSecret: 'wa-app-secret-1' });
  });

  it('seals a channel created only when absent (putIfAbsent: TRIGGERS_FILE unchanged since last applied) like one put', async () => {
    const registry = await open(new SecretsCipher(keyA));
    await expect(registry.channels.putIfAbsent('wa-seeded', channel('seeded-app-secret-1'))).resolves.toBe(true);
    const raw = await rawChannel('wa-seeded');
    expect(raw).not.toContain('seeded-app-secret-1');
    expect(JSON.parse(raw).appSecret).toMatchObject({ $sealed: 'aes-256-gcm', kid: keyId(keyA) });
    await expect(registry.channels.get('wa-seeded')).resolves.toMatchObject({ appSecret: 'seeded-app-secret-1' });
  });

  it('seals each of a trigger provider\'s secrets', async () => {
    const registry = await open(new SecretsCipher(keyA));
    const trigger = {
      workflowId: 'wf',
      workspaceId: 'ws',
      deployed: true,
      updatedAt: '2025-01-01T00:00:00.000Z',
      provider: { name: 'github', secrets: ['gh-secret-old', 'gh-secret-new'] },
    } as StoredTrigger;
    await registry.triggers.put('gh', trigger);
    const raw = (await admin.hget(`${prefix}registry:triggers`, 'gh')) ?? '';
    expect(raw).not.toMatch(/gh-secret-old|gh-secret-new/);
    expect(raw).toContain(keyId(keyA));
    await expect(registry.triggers.get('gh')).resolves.toEqual(trigger);
  });

  it('still reads secrets stored in clear before SECRETS_KEY was set, and reseals them at start', async () => {
    const before = await open();
    await before.channels.put('wa-old', channel('stored-in-clear-1'));
    expect(await rawChannel('wa-old')).toContain('stored-in-clear-1');

    const after = await open(new SecretsCipher(keyA));
    await expect(after.channels.get('wa-old')).resolves.toMatchObject({ appSecret: 'stored-in-clear-1' });
    expect(await rawChannel('wa-old')).not.toContain('stored-in-clear-1');
    expect(JSON.parse(await rawChannel('wa-old')).appSecret.kid).toBe(keyId(keyA));
  });

  it('rotation: SECRETS_KEY_PREVIOUS opens the old values, the start reseals them under the new key, then the old key can go', async () => {
    const old = await open(new SecretsCipher(keyA));
    await old.channels.put('wa-rot', channel('rotated-secret-1'));

    const rotating = await open(new SecretsCipher(keyB, keyA));
    await expect(rotating.channels.get('wa-rot')).resolves.toMatchObject({ appSecret: 'rotated-secret-1' });
    expect(JSON.parse(await rawChannel('wa-rot')).appSecret.kid).toBe(keyId(keyB));

    const rotated = await open(new SecretsCipher(keyB));
    await expect(rotated.channels.get('wa-rot')).resolves.toMatchObject({ appSecret: 'rotated-secret-1' });
  });

  it('resealing never undoes a change written meanwhile (compare-and-set)', async () => {
    const before = await open();
    await before.channels.put('wa-race', channel('old-clear-secret'));
    const connection = new RedisConnection({ target: REDIS_TEST_URL, timeoutMs: 1000 }, silentLogger());
    await readyConnection(connection);
    const registry = new RedisRegistry(connection, prefix, silentLogger(), { cipher: new SecretsCipher(keyA) });
    opened.push({ connection, registry });
    // Another process writes between the reseal's read and its write.
    const newer = JSON.stringify(channel('newer-clear-secret'));
    const evaluate = connection.client.eval.bind(connection.client);
    jest.spyOn(connection.client, 'eval').mockImplementation(async (...args: unknown[]) => {
      await admin.hset(`${prefix}registry:channels`, 'wa-race', newer);
      return (evaluate as (...a: unknown[]) => Promise<unknown>)(...args);
    });
    const report = await registry.channels.resealStored();
    expect(report).toEqual({ checked: 1, resealed: 0, unreadable: 0 });
    expect(await rawChannel('wa-race')).toBe(newer);
  });

  it('a value sealed under an unknown key is refused, not used, and logged with its id and key id (never the secret)', async () => {
    const other = await open(new SecretsCipher(keyB));
    await other.channels.put('wa-lost', channel('lost-secret-1'));
    const logs = capturingLogger();
    const registry = await open(new SecretsCipher(keyA), logs.logger);

    await expect(registry.channels.get('wa-lost')).rejects.toBeInstanceOf(SecretUnreadableError);
    await expect(registry.channels.list(10)).rejects.toBeInstanceOf(SecretUnreadableError);
    const line = logs.lines.find((l) => l.level === 'error' && l.id === 'wa-lost');
    expect(line).toMatchObject({ collection: 'channels', kid: keyId(keyB) });
    expect(logs.text()).not.toContain('lost-secret-1');
    // The reseal pass left it alone: it is still sealed under the key that can open it.
    expect(JSON.parse(await rawChannel('wa-lost')).appSecret.kid).toBe(keyId(keyB));
  });

  it('a sealed value is refused by a process without SECRETS_KEY', async () => {
    const sealer = await open(new SecretsCipher(keyA));
    await sealer.channels.put('wa-sealed', channel('sealed-secret-1'));
    const plain = await open();
    await expect(plain.channels.get('wa-sealed')).rejects.toThrow(/SECRETS_KEY is not set/);
  });

  it('warns at start when Redis is used without SECRETS_KEY', async () => {
    const logs = capturingLogger();
    await open(undefined, logs.logger);
    expect(logs.lines.find((l) => l.level === 'warn' && String(l.msg).includes('SECRETS_KEY is not set'))).toBeDefined();
  });
});
