/**
 * One suite, every Registry: the embedded (memory) registry and the Redis registry, on one
 * Redis (REDIS_TEST_URL, 127.0.0.1:6379, a unique prefix) and on a three-master Redis Cluster
 * this file starts, must behave the same.
 */
import { MemoryRegistry } from '../../src/registry/memory';
import { RedisRegistry } from '../../src/registry/redis';
import type { Registry } from '../../src/registry/registry';
import type { StoredChannel, StoredTrigger } from '../../src/registry/schemas';
import { silentLogger, uniquePrefix } from '../helpers/redis';
import { redisSetups } from '../helpers/redis-setups';

interface Backend {
  registry: Registry;
  cleanup(): Promise<void>;
}

const backends: Array<[string, () => Promise<Backend>]> = [
  [
    'memory',
    async () => {
      const registry = new MemoryRegistry();
      await registry.start();
      return { registry, cleanup: () => registry.close() };
    },
  ],
  ...redisSetups().map((setup): [string, () => Promise<Backend>] => [
    setup.name,
    async () => {
      const prefix = uniquePrefix('registry');
      const connection = await setup.connect();
      const registry = new RedisRegistry(connection, prefix, silentLogger());
      await registry.start();
      return {
        registry,
        cleanup: async () => {
          await registry.close();
          await registry.close();
          await connection.close();
          await setup.deleteKeys(prefix);
          expect(await setup.keysUnder(prefix)).toEqual([]);
        },
      };
    },
  ]),
];

function trigger(workflowId: string, overrides: Partial<StoredTrigger> = {}): StoredTrigger {
  return {
    workflowId,
    workspaceId: 'ws-1',
    deployed: true,
    auth: { tokenHash: 'a'.repeat(64), header: 'x-token' },
    inputFormat: [{ name: 'amount', type: 'number' }],
    response: { status: 202, body: { ok: true, list: [1, 'x', null] } },
    rateLimit: { limit: 10, windowSeconds: 60 },
    idempotency: { keyField: 'data.id', ttlSeconds: 3600 },
    updatedAt: '2025-01-01T00:00:00.000Z',
    ...overrides,
  };
}

function channel(inboxId: string): StoredChannel {
  return {
    provider: 'whatsapp',
    workspaceId: 'ws-1',
    inboxId,
    phoneNumberId: '1234567890',
    appSecret: 'app-secret',
    verifyTokenHash: 'b'.repeat(64),
    updatedAt: '2025-01-01T00:00:00.000Z',
  };
}

describe.each(backends)('Registry contract: %s', (_name, create) => {
  let backend: Backend;
  let registry: Registry;

  beforeEach(async () => {
    backend = await create();
    registry = backend.registry;
  });

  afterEach(async () => {
    await backend.cleanup();
  });

  it('answers ping', async () => {
    await expect(registry.ping()).resolves.toBeUndefined();
  });

  it('returns undefined for an unknown id', async () => {
    await expect(registry.triggers.get('nope')).resolves.toBeUndefined();
    await expect(registry.channels.get('nope')).resolves.toBeUndefined();
  });

  it('stores and reads a trigger as it was put', async () => {
    await registry.triggers.put('orders', trigger('wf-1'));
    await expect(registry.triggers.get('orders')).resolves.toEqual(trigger('wf-1'));
  });

  it('replaces on a second put, and a read after it sees the new value', async () => {
    await registry.triggers.put('orders', trigger('wf-1'));
    await expect(registry.triggers.get('orders')).resolves.toMatchObject({ deployed: true });
    await registry.triggers.put('orders', trigger('wf-1', { deployed: false }));
    await expect(registry.triggers.get('orders')).resolves.toMatchObject({ deployed: false });
  });

  it('keeps the registration id over updates; a record deleted and created again has its new one; one without an id keeps none', async () => {
    // As toStoredTrigger makes them: a fresh id minted first in the record on every PUT.
    const registered = (registrationId: string, workflowId: string): StoredTrigger => ({ registrationId, ...trigger(workflowId) });
    await registry.triggers.put('orders', registered('reg-first', 'wf-1'));
    await registry.triggers.put('orders', registered('reg-second', 'wf-2'));
    await expect(registry.triggers.get('orders')).resolves.toEqual(registered('reg-first', 'wf-2'));
    await registry.triggers.delete('orders');
    await registry.triggers.put('orders', registered('reg-third', 'wf-3'));
    await expect(registry.triggers.get('orders')).resolves.toEqual(registered('reg-third', 'wf-3'));
    await expect(registry.triggers.putIfAbsent('orders', registered('reg-fourth', 'wf-4'))).resolves.toBe(false);
    await expect(registry.triggers.get('orders')).resolves.toMatchObject({ registrationId: 'reg-third', workflowId: 'wf-3' });

    await registry.triggers.put('legacy', trigger('wf-1'));
    await registry.triggers.put('legacy', registered('reg-new', 'wf-2'));
    await expect(registry.triggers.get('legacy')).resolves.toEqual(trigger('wf-2'));

    const registeredChannel = (registrationId: string, inboxId: string): StoredChannel => ({ registrationId, ...channel(inboxId) });
    await registry.channels.put('c1', registeredChannel('reg-c1', 'inbox-1'));
    await registry.channels.put('c1', registeredChannel('reg-c2', 'inbox-2'));
    await expect(registry.channels.get('c1')).resolves.toEqual(registeredChannel('reg-c1', 'inbox-2'));
  });

  it('sees a put after a read that found nothing', async () => {
    await expect(registry.triggers.get('late')).resolves.toBeUndefined();
    await registry.triggers.put('late', trigger('wf-late'));
    await expect(registry.triggers.get('late')).resolves.toEqual(trigger('wf-late'));
  });

  it('deletes: true when it existed, false when absent', async () => {
    await registry.triggers.put('orders', trigger('wf-1'));
    await expect(registry.triggers.get('orders')).resolves.toBeDefined();
    await expect(registry.triggers.delete('orders')).resolves.toBe(true);
    await expect(registry.triggers.get('orders')).resolves.toBeUndefined();
    await expect(registry.triggers.delete('orders')).resolves.toBe(false);
    await expect(registry.triggers.delete('never-there')).resolves.toBe(false);
  });

  it('lists in id order, in pages, with a cursor; nextCursor null on the last page', async () => {
    const ids = ['g-7', 'a-1', 'e-5', 'c-3', 'b-2', 'f-6', 'd-4'];
    for (const id of ids) await registry.triggers.put(id, trigger(`wf-${id}`));

    const first = await registry.triggers.list(3);
    expect(first.items.map((i) => i.id)).toEqual(['a-1', 'b-2', 'c-3']);
    expect(first.items[0].value).toEqual(trigger('wf-a-1'));
    expect(first.nextCursor).not.toBeNull();

    const second = await registry.triggers.list(3, first.nextCursor ?? undefined);
    expect(second.items.map((i) => i.id)).toEqual(['d-4', 'e-5', 'f-6']);
    expect(second.nextCursor).not.toBeNull();

    const last = await registry.triggers.list(3, second.nextCursor ?? undefined);
    expect(last.items.map((i) => i.id)).toEqual(['g-7']);
    expect(last.nextCursor).toBeNull();
  });

  it('ends with nextCursor null when the last page is full', async () => {
    for (const id of ['a', 'b', 'c', 'd']) await registry.triggers.put(id, trigger(id));
    const first = await registry.triggers.list(2);
    expect(first.items.map((i) => i.id)).toEqual(['a', 'b']);
    const second = await registry.triggers.list(2, first.nextCursor ?? undefined);
    expect(second.items.map((i) => i.id)).toEqual(['c', 'd']);
    expect(second.nextCursor).toBeNull();
  });

  it('keeps paging stable when items change between pages', async () => {
    for (const id of ['a', 'b', 'c', 'd', 'e']) await registry.triggers.put(id, trigger(id));
    const first = await registry.triggers.list(2);
    await registry.triggers.delete('b');
    await registry.triggers.delete('c');
    await registry.triggers.put('aa', trigger('aa'));
    const second = await registry.triggers.list(2, first.nextCursor ?? undefined);
    expect(second.items.map((i) => i.id)).toEqual(['d', 'e']);
    expect(second.nextCursor).toBeNull();
  });

  it('lists nothing when empty', async () => {
    await expect(registry.triggers.list(10)).resolves.toEqual({ items: [], nextCursor: null });
    await expect(registry.channels.list(10)).resolves.toEqual({ items: [], nextCursor: null });
  });

  it('leaves deleted ids out of the list', async () => {
    for (const id of ['a', 'b', 'c']) await registry.triggers.put(id, trigger(id));
    await registry.triggers.delete('b');
    const page = await registry.triggers.list(10);
    expect(page.items.map((i) => i.id)).toEqual(['a', 'c']);
    expect(page.nextCursor).toBeNull();
  });

  it('keeps triggers and channels apart', async () => {
    await registry.triggers.put('same-id', trigger('wf-1'));
    await registry.channels.put('same-id', channel('inbox-1'));
    await registry.channels.put('only-channel', channel('inbox-2'));

    await expect(registry.triggers.get('same-id')).resolves.toEqual(trigger('wf-1'));
    await expect(registry.channels.get('same-id')).resolves.toEqual(channel('inbox-1'));
    await expect(registry.triggers.get('only-channel')).resolves.toBeUndefined();
    expect((await registry.triggers.list(10)).items.map((i) => i.id)).toEqual(['same-id']);
    expect((await registry.channels.list(10)).items.map((i) => i.id)).toEqual(['only-channel', 'same-id']);

    await expect(registry.channels.delete('same-id')).resolves.toBe(true);
    await expect(registry.triggers.get('same-id')).resolves.toEqual(trigger('wf-1'));
    await expect(registry.channels.get('same-id')).resolves.toBeUndefined();
  });
});
