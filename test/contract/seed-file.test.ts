/**
 * TRIGGERS_FILE on the memory and the Redis registry (one Redis and a cluster; issue 10 item
 * 10): written in full when the file changed since it was last applied, else only what is
 * missing is created, so changes made through the admin API survive a restart with the same
 * file.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MemoryRegistry } from '../../src/registry/memory';
import { toStoredTrigger } from '../../src/registry/records';
import { RedisRegistry } from '../../src/registry/redis';
import type { Registry } from '../../src/registry/registry';
import { seedRegistry } from '../../src/registry/seed-file';
import { sha256Hex } from '../../src/security';
import { silentLogger, uniquePrefix } from '../helpers/redis';
import { redisSetups } from '../helpers/redis-setups';
import { tempDir } from '../helpers/tmp';

interface Backend {
  registry: Registry;
  cleanup(): Promise<void>;
}

const backends: Array<[string, () => Promise<Backend>]> = [
  [
    'memory',
    async () => {
      const registry = new MemoryRegistry();
      return { registry, cleanup: () => registry.close() };
    },
  ],
  ...redisSetups().map((setup): [string, () => Promise<Backend>] => [
    setup.name,
    async () => {
      const prefix = uniquePrefix('seed');
      const connection = await setup.connect();
      const registry = new RedisRegistry(connection, prefix, silentLogger());
      await registry.start();
      return {
        registry,
        cleanup: async () => {
          await registry.close();
          await connection.close();
          await setup.deleteKeys(prefix);
        },
      };
    },
  ]),
];

const trigger = (token: string) => ({ workflowId: 'wf-1', workspaceId: 'ws-1', deployed: true, auth: { token } });
const channel = { provider: 'whatsapp', workspaceId: 'ws-1', inboxId: 'in-1', phoneNumberId: '123', verifyToken: 'v', appSecret: 's' };

describe.each(backends)('seedRegistry: %s', (_name, create) => {
  let backend: Backend;
  let registry: Registry;
  const tmp = tempDir('igw-seed-');
  const file = join(tmp.dir, 'triggers.json');
  const writeSeed = (content: unknown) => writeFileSync(file, JSON.stringify(content));
  const tokenHashOf = async (path: string) => (await registry.triggers.get(path))?.auth?.tokenHash;

  beforeEach(async () => {
    backend = await create();
    registry = backend.registry;
  });

  afterEach(async () => {
    await backend.cleanup();
  });

  afterAll(() => tmp.cleanup());

  it('applies a file it has not seen in full, and remembers its hash', async () => {
    writeSeed({ triggers: { orders: trigger('file-token-1') }, channels: { wa: channel } });
    await registry.triggers.put('orders', toStoredTrigger(trigger('older-token-1')));
    await expect(seedRegistry(registry, file)).resolves.toEqual({ problems: [], fileChanged: true, triggers: 1, channels: 1 });
    expect(await tokenHashOf('orders')).toBe(sha256Hex('file-token-1'));
    expect(await registry.channels.get('wa')).toMatchObject({ inboxId: 'in-1' });
  });

  it('the same file again: keeps what changed since (a rotated token), re-creates what is missing', async () => {
    writeSeed({ triggers: { orders: trigger('file-token-1'), refunds: trigger('file-token-1') } });
    await seedRegistry(registry, file);
    await registry.triggers.put('orders', toStoredTrigger(trigger('rotated-token-2')));
    await registry.triggers.delete('refunds');

    await expect(seedRegistry(registry, file)).resolves.toEqual({ problems: [], fileChanged: false, triggers: 1, channels: 0 });
    expect(await tokenHashOf('orders')).toBe(sha256Hex('rotated-token-2'));
    expect(await tokenHashOf('refunds')).toBe(sha256Hex('file-token-1'));
  });

  it('a changed file (one byte is enough) is applied in full again', async () => {
    writeSeed({ triggers: { orders: trigger('file-token-1') } });
    await seedRegistry(registry, file);
    await registry.triggers.put('orders', toStoredTrigger(trigger('rotated-token-2')));

    writeFileSync(file, `${JSON.stringify({ triggers: { orders: trigger('file-token-3') } })}\n`);
    await expect(seedRegistry(registry, file)).resolves.toMatchObject({ fileChanged: true, triggers: 1 });
    expect(await tokenHashOf('orders')).toBe(sha256Hex('file-token-3'));
    // ...and from then on it is the unchanged file
    await registry.triggers.put('orders', toStoredTrigger(trigger('rotated-token-4')));
    await expect(seedRegistry(registry, file)).resolves.toMatchObject({ fileChanged: false, triggers: 0 });
    expect(await tokenHashOf('orders')).toBe(sha256Hex('rotated-token-4'));
  });

  it('a file with problems writes nothing and is not remembered', async () => {
    writeSeed({ triggers: { refunds: trigger('file-token-1'), orders: { ...trigger('file-token-1'), deployed: 'yes' } } });
    const result = await seedRegistry(registry, file);
    expect(result.problems).toEqual([expect.stringContaining('TRIGGERS_FILE: triggers.orders.deployed')]);
    expect(await registry.triggers.get('refunds')).toBeUndefined();
    expect(await registry.appliedFileHash()).toBeUndefined();
  });

  it('putIfAbsent stores only an absent id', async () => {
    await expect(registry.triggers.putIfAbsent('p', toStoredTrigger(trigger('first-token')))).resolves.toBe(true);
    await expect(registry.triggers.putIfAbsent('p', toStoredTrigger(trigger('second-token')))).resolves.toBe(false);
    expect(await tokenHashOf('p')).toBe(sha256Hex('first-token'));
    expect((await registry.triggers.list(10)).items.map((item) => item.id)).toEqual(['p']);
  });
});
