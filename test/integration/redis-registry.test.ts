/**
 * Two gateway processes, simulated by two RedisConnections and two RedisRegistry instances on
 * one prefix: a change through A is in force on B within 1 s, although B's cache was warm.
 */
import type Redis from 'ioredis';
import { RedisRegistry, type RedisRegistryOptions } from '../../src/registry/redis';
import type { StoredTrigger } from '../../src/registry/schemas';
import { RedisConnection } from '../../src/redis/connection';
import { REDIS_TEST_URL, deleteKeys, requireRedis, silentLogger, sleep, uniquePrefix, waitFor } from '../helpers/redis';

const trigger = (deployed: boolean, workflowId = 'wf-1'): StoredTrigger => ({
  workflowId,
  workspaceId: 'ws-1',
  deployed,
  updatedAt: new Date().toISOString(),
});

describe('RedisRegistry across two processes', () => {
  let admin: Redis;
  let prefix: string;
  const connections: RedisConnection[] = [];
  const registries: RedisRegistry[] = [];

  async function startProcess(options?: RedisRegistryOptions): Promise<{ connection: RedisConnection; registry: RedisRegistry }> {
    const connection = new RedisConnection(REDIS_TEST_URL, 1000, silentLogger());
    await connection.start();
    const registry = new RedisRegistry(connection, prefix, silentLogger(), options);
    await registry.start();
    connections.push(connection);
    registries.push(registry);
    return { connection, registry };
  }

  beforeEach(async () => {
    admin = await requireRedis();
    prefix = uniquePrefix('registry-int');
  });

  afterEach(async () => {
    for (const registry of registries.splice(0)) await registry.close();
    for (const connection of connections.splice(0)) await connection.close();
    await deleteKeys(admin, prefix);
    admin.disconnect();
  });

  it('an undeploy and a delete through A are in force on B within 1 s', async () => {
    const { registry: a } = await startProcess();
    const { registry: b } = await startProcess();
    await a.triggers.put('orders', trigger(true));

    // B's cache is warm: it holds the deployed trigger.
    await expect(b.triggers.get('orders')).resolves.toMatchObject({ deployed: true });

    await a.triggers.put('orders', trigger(false));
    const undeployMs = await waitFor(async () => (await b.triggers.get('orders'))?.deployed === false, 2000);
    expect(undeployMs).toBeLessThan(1000);

    await expect(b.triggers.get('orders')).resolves.toMatchObject({ deployed: false });
    await a.triggers.delete('orders');
    const deleteMs = await waitFor(async () => (await b.triggers.get('orders')) === undefined, 2000);
    expect(deleteMs).toBeLessThan(1000);
  });

  it('pub/sub alone propagates the change (B caches for a minute)', async () => {
    const { registry: a } = await startProcess();
    const { registry: b } = await startProcess({ cacheTtlMs: 60_000 });
    await a.channels.put('wa-1', {
      provider: 'whatsapp',
      workspaceId: 'ws-1',
      inboxId: 'inbox-1',
      phoneNumberId: '123',
      appSecret: 'old-secret',
      verifyTokenHash: 'x'.repeat(64),
      updatedAt: new Date().toISOString(),
    });
    await expect(b.channels.get('wa-1')).resolves.toMatchObject({ appSecret: 'old-secret' });
    const changed = { ...(await a.channels.get('wa-1'))!, appSecret: 'new-secret' };
    await a.channels.put('wa-1', changed);
    const ms = await waitFor(async () => (await b.channels.get('wa-1'))?.appSecret === 'new-secret', 2000);
    expect(ms).toBeLessThan(1000);
  });

  it('a path B had found unknown is served on B within 1 s once A creates it', async () => {
    const { registry: a } = await startProcess({ cacheTtlMs: 60_000 });
    const { registry: b } = await startProcess({ cacheTtlMs: 60_000 });
    await expect(b.triggers.get('new-path')).resolves.toBeUndefined();
    await a.triggers.put('new-path', trigger(true));
    const ms = await waitFor(async () => (await b.triggers.get('new-path')) !== undefined, 2000);
    expect(ms).toBeLessThan(1000);
  });

  it('a lost invalidation (B not subscribed) is still in force within 1 s: the cache ttl bounds it', async () => {
    const { registry: a } = await startProcess();
    const { connection: connB, registry: b } = await startProcess();
    await a.triggers.put('orders', trigger(true));
    await expect(b.triggers.get('orders')).resolves.toMatchObject({ deployed: true });

    // B misses every message from now on, as if its subscriber had been away.
    await connB.subscriber().unsubscribe();
    await a.triggers.put('orders', trigger(false));
    const ms = await waitFor(async () => (await b.triggers.get('orders'))?.deployed === false, 2000);
    expect(ms).toBeLessThan(1000);
  });

  it('caches reads, found and not found: a flood of one unknown path costs one HGET', async () => {
    const { connection, registry } = await startProcess();
    await registry.triggers.put('known', trigger(true));
    const hget = jest.spyOn(connection.client, 'hget');

    const concurrent = await Promise.all(Array.from({ length: 100 }, () => registry.triggers.get('unknown')));
    expect(concurrent.every((t) => t === undefined)).toBe(true);
    for (let i = 0; i < 100; i += 1) await registry.triggers.get('unknown');
    expect(hget).toHaveBeenCalledTimes(1);

    for (let i = 0; i < 100; i += 1) await registry.triggers.get('known');
    expect(hget).toHaveBeenCalledTimes(2);

    // Past the ttl the next read asks Redis again.
    await sleep(900);
    await registry.triggers.get('unknown');
    expect(hget).toHaveBeenCalledTimes(3);
    hget.mockRestore();
  });
});
