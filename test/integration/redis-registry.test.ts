/**
 * Two gateway processes, simulated by two RedisConnections and two RedisRegistry instances on
 * one prefix, on one Redis and on a three-master Redis Cluster: a change through A is in force
 * on B within 1 s although B's cache was warm, and B's cache is served without Redis reads
 * for as long as the version counter confirms that B missed no change.
 */
import { RedisRegistry, type RedisRegistryOptions } from '../../src/registry/redis';
import type { StoredTrigger, WhatsAppChannel } from '../../src/registry/schemas';
import type { RedisConnection } from '../../src/redis/connection';
import { TestClock } from '../helpers/clock';
import { silentLogger, uniquePrefix, waitFor } from '../helpers/redis';
import { redisSetupRows } from '../helpers/redis-setups';

const trigger = (deployed: boolean, workflowId = 'wf-1'): StoredTrigger => ({
  workflowId,
  workspaceId: 'ws-1',
  deployed,
  updatedAt: new Date().toISOString(),
});

/** Polls only when the test calls confirm(): the cache's time passes only when the test says so. */
const MANUAL: RedisRegistryOptions = { confirmEveryMs: 3_600_000 };

describe.each(redisSetupRows())('RedisRegistry across two processes: %s', (_name, setup) => {
  let prefix: string;
  const connections: RedisConnection[] = [];
  const registries: RedisRegistry[] = [];
  let clock: TestClock | undefined;

  async function startProcess(options?: RedisRegistryOptions): Promise<{ connection: RedisConnection; registry: RedisRegistry }> {
    const connection = await setup.connect();
    const registry = new RedisRegistry(connection, prefix, silentLogger(), options);
    await registry.start();
    // The first poll sets where this process starts counting changes from.
    await registry.confirm();
    connections.push(connection);
    registries.push(registry);
    return { connection, registry };
  }

  /** Date.now() as the test sets it from now on (timers stay real). */
  function standStill(): TestClock {
    clock = new TestClock().install();
    return clock;
  }

  beforeEach(() => {
    prefix = uniquePrefix('registry-int');
  });

  afterEach(async () => {
    clock?.uninstall();
    clock = undefined;
    for (const registry of registries.splice(0)) await registry.close();
    for (const connection of connections.splice(0)) await connection.close();
    await setup.deleteKeys(prefix);
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

  it('pub/sub alone propagates the change (B trusts its cache for a minute and never polls)', async () => {
    const { registry: a } = await startProcess();
    const { registry: b } = await startProcess({ ...MANUAL, cacheTtlMs: 60_000 });
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
    const changed = { ...((await a.channels.get('wa-1')) as WhatsAppChannel), appSecret: 'new-secret' };
    await a.channels.put('wa-1', changed);
    const ms = await waitFor(async () => ((await b.channels.get('wa-1')) as WhatsAppChannel | undefined)?.appSecret === 'new-secret', 2000);
    expect(ms).toBeLessThan(1000);
  });

  it('a path B had found unknown is served on B within 1 s once A creates it', async () => {
    const { registry: a } = await startProcess({ ...MANUAL, cacheTtlMs: 60_000 });
    const { registry: b } = await startProcess({ ...MANUAL, cacheTtlMs: 60_000 });
    await expect(b.triggers.get('new-path')).resolves.toBeUndefined();
    await a.triggers.put('new-path', trigger(true));
    const ms = await waitFor(async () => (await b.triggers.get('new-path')) !== undefined, 2000);
    expect(ms).toBeLessThan(1000);
  });

  it('a lost change message is caught by the version counter within 1 s, although B trusts entries for a minute', async () => {
    const { registry: a } = await startProcess();
    const { connection: connB, registry: b } = await startProcess({ cacheTtlMs: 60_000, confirmEveryMs: 200 });
    await a.triggers.put('orders', trigger(true));
    await expect(b.triggers.get('orders')).resolves.toMatchObject({ deployed: true });

    // B misses every message from now on, as if its subscriber had been away.
    await connB.subscriber().unsubscribe();
    await a.triggers.put('orders', trigger(false));
    const ms = await waitFor(async () => (await b.triggers.get('orders'))?.deployed === false, 3000);
    expect(ms).toBeLessThan(1000);
  });

  it('a lost change is taken as lost at the second poll that misses it, and B then reads again', async () => {
    const { registry: a } = await startProcess(MANUAL);
    await a.triggers.put('orders', trigger(true));
    // B starts after that change: no message of it is on its way to B.
    const { connection: connB, registry: b } = await startProcess({ ...MANUAL, cacheTtlMs: 60_000 });
    await connB.subscriber().unsubscribe();
    await expect(b.triggers.get('orders')).resolves.toMatchObject({ deployed: true });
    const hget = jest.spyOn(connB.client, 'hget');

    await a.triggers.put('orders', trigger(false));
    // First poll: the new version may still be on its way; B keeps serving its entry.
    await b.confirm();
    await expect(b.triggers.get('orders')).resolves.toMatchObject({ deployed: true });
    expect(hget).not.toHaveBeenCalled();
    // Second poll: still missing, so lost. Every entry is read again.
    await b.confirm();
    await expect(b.triggers.get('orders')).resolves.toMatchObject({ deployed: false });
    expect(hget).toHaveBeenCalledTimes(1);
    hget.mockRestore();
  });

  it('a confirmed cache is served past the ttl without a read; unconfirmed, entries age out after 800 ms', async () => {
    const { connection, registry } = await startProcess(MANUAL);
    await registry.triggers.put('known', trigger(true));
    const time = standStill();
    const hget = jest.spyOn(connection.client, 'hget');

    // Concurrent misses of one id share one HGET; found and not found are both cached.
    const concurrent = await Promise.all(Array.from({ length: 100 }, () => registry.triggers.get('unknown')));
    expect(concurrent.every((t) => t === undefined)).toBe(true);
    await expect(registry.triggers.get('known')).resolves.toMatchObject({ deployed: true });
    expect(hget).toHaveBeenCalledTimes(2);

    // No poll answered meanwhile: at 800 ms both are read again.
    time.advance(799);
    await registry.triggers.get('unknown');
    await registry.triggers.get('known');
    expect(hget).toHaveBeenCalledTimes(2);
    time.advance(1);
    await registry.triggers.get('unknown');
    await registry.triggers.get('known');
    expect(hget).toHaveBeenCalledTimes(4);

    // Each poll that finds no change missed keeps every entry fresh for another 800 ms.
    for (let i = 0; i < 20; i += 1) {
      time.advance(700);
      await registry.confirm();
      await registry.triggers.get('unknown');
      await registry.triggers.get('known');
    }
    expect(hget).toHaveBeenCalledTimes(4);
    time.advance(800);
    await registry.triggers.get('known');
    expect(hget).toHaveBeenCalledTimes(5);
    hget.mockRestore();
  });

  it('a flood of unknown paths never pushes known ones out of the cache (the negative cache is bounded)', async () => {
    const { connection, registry } = await startProcess({ ...MANUAL, maxCacheEntries: 1000, maxMissingEntries: 100 });
    for (let i = 0; i < 50; i += 1) await registry.triggers.put(`known-${i}`, trigger(true, `wf-${i}`));
    standStill(); // no entry ages however long the flood takes
    for (let i = 0; i < 50; i += 1) await registry.triggers.get(`known-${i}`);
    const hget = jest.spyOn(connection.client, 'hget');

    await Promise.all(Array.from({ length: 2000 }, (_, i) => registry.triggers.get(`unknown-${i}`)));
    expect(hget).toHaveBeenCalledTimes(2000);
    expect(registry.triggers.cached).toEqual({ found: 50, missing: 100 });

    for (let i = 0; i < 50; i += 1) await expect(registry.triggers.get(`known-${i}`)).resolves.toMatchObject({ workflowId: `wf-${i}` });
    // The most recent unknown paths are still remembered.
    await registry.triggers.get('unknown-1999');
    expect(hget).toHaveBeenCalledTimes(2000);
    hget.mockRestore();
  });
});
