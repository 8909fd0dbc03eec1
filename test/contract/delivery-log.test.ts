/**
 * One suite, every DeliveryLog: the embedded (memory) log and the Redis log, on one Redis
 * (REDIS_TEST_URL, a unique prefix) and on a three-master Redis Cluster, must behave the same.
 */
import { InvalidCursorError, unauthenticatedShare, type DeliveryEntry, type DeliveryLog, type LogTarget } from '../../src/delivery-log/delivery-log';
import { MemoryDeliveryLog } from '../../src/delivery-log/memory';
import { RedisDeliveryLog } from '../../src/delivery-log/redis';
import { uniquePrefix } from '../helpers/redis';
import { redisSetups } from '../helpers/redis-setups';
import { waitUntil } from '../helpers/wait';

const setups = redisSetups();
const MAX = 5;
const DAY_MS = 86_400_000;

interface Backend {
  log: DeliveryLog;
  /** Moves the log's clock forward. */
  advance(ms: number): void;
  lost(): number;
  cleanup(): Promise<void>;
}

const backends: Array<[string, () => Promise<Backend>]> = [
  [
    'memory',
    async () => {
      let now = Date.now();
      const log = new MemoryDeliveryLog({ maxEntries: MAX, maxTargets: 3, now: () => now });
      return { log, advance: (ms) => void (now += ms), lost: () => 0, cleanup: () => log.close() };
    },
  ],
  ...setups.map((setup): [string, () => Promise<Backend>] => [
    setup.name,
    async () => {
      const prefix = uniquePrefix('deliveries');
      const connection = await setup.connect();
      let now = Date.now();
      let lost = 0;
      const log = new RedisDeliveryLog(connection.client, { prefix, maxEntries: MAX, onLost: () => void lost++, now: () => now });
      return {
        log,
        advance: (ms) => void (now += ms),
        lost: () => lost,
        cleanup: async () => {
          await log.close();
          await connection.close();
          await setup.deleteKeys(prefix);
        },
      };
    },
  ]),
];

const trigger: LogTarget = { kind: 'trigger', id: 'orders' };
const entry = (n: number): DeliveryEntry => ({
  at: new Date().toISOString(),
  requestId: `req-${n}`,
  status: 200,
  outcome: 'accepted',
  eventId: `evt-${n}`,
  bytes: n,
  ms: 1.5,
  clientIp: '127.0.0.1',
});

async function readAll(log: DeliveryLog, target: LogTarget, limit = 100): Promise<string[]> {
  return (await log.page(target, limit)).entries.map((e) => e.requestId);
}

/** Every request id, newest first, read two a page by following nextCursor (at most 10 pages). */
async function pageThrough(log: DeliveryLog, target: LogTarget): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 10; pages++) {
    const page = await log.page(target, 2, cursor);
    seen.push(...page.entries.map((e) => e.requestId));
    if (page.nextCursor === null) break;
    cursor = page.nextCursor;
  }
  return seen;
}

describe.each(backends)('DeliveryLog contract: %s', (_name, create) => {
  let backend: Backend;
  beforeEach(async () => {
    backend = await create();
    await backend.log.start();
  });
  afterEach(() => backend.cleanup());

  it('returns what was appended, newest first, as it was written', async () => {
    for (let n = 1; n <= 3; n++) backend.log.append(trigger, entry(n));
    await waitUntil(async () => (await readAll(backend.log, trigger)).length === 3, 'three entries');
    const page = await backend.log.page(trigger, 10);
    expect(page).toEqual({ entries: [entry(3), entry(2), entry(1)].map((e) => ({ ...e, at: expect.any(String) })), nextCursor: null });
  });

  it('keeps the last maxEntries per target, and targets apart', async () => {
    const channel: LogTarget = { kind: 'channel', id: 'orders' };
    for (let n = 1; n <= MAX + 3; n++) backend.log.append(trigger, entry(n));
    backend.log.append(channel, entry(100));
    await waitUntil(async () => (await readAll(backend.log, channel)).length === 1, 'the channel entry');
    await waitUntil(async () => (await readAll(backend.log, trigger))[0] === `req-${MAX + 3}`, 'the last trigger entry');
    expect(await readAll(backend.log, trigger)).toEqual(['req-8', 'req-7', 'req-6', 'req-5', 'req-4']);
    expect(await readAll(backend.log, channel)).toEqual(['req-100']);
  });

  it('pages with the cursor until nextCursor is null', async () => {
    for (let n = 1; n <= 5; n++) backend.log.append(trigger, entry(n));
    await waitUntil(async () => (await readAll(backend.log, trigger)).length === 5, 'five entries');
    expect(await pageThrough(backend.log, trigger)).toEqual(['req-5', 'req-4', 'req-3', 'req-2', 'req-1']);
  });

  it('pages through exactly the last maxEntries once older ones were dropped', async () => {
    for (let n = 1; n <= 2 * MAX + 2; n++) backend.log.append(trigger, entry(n));
    await waitUntil(async () => (await readAll(backend.log, trigger))[0] === `req-${2 * MAX + 2}`, 'the last entry');
    expect(await pageThrough(backend.log, trigger)).toEqual(['req-12', 'req-11', 'req-10', 'req-9', 'req-8']);
  });

  it('refuses a cursor it did not give out', async () => {
    await expect(backend.log.page(trigger, 2, 'not a cursor')).rejects.toThrow('invalid cursor');
  });

  it('answers an empty page for a target without entries', async () => {
    expect(await backend.log.page({ kind: 'trigger', id: 'nobody' }, 10)).toEqual({ entries: [], nextCursor: null });
  });

  it('refuses a cursor it never gave out: 0-0, past 64 bits, 0, or past the last entry', async () => {
    backend.log.append(trigger, entry(1));
    await waitUntil(async () => (await readAll(backend.log, trigger)).length === 1, 'the entry');
    for (const cursor of ['0-0', '99999999999999999999-0', '0-99999999999999999999', '0', '999999999999999', '1-1x', '9999999999999-0']) {
      await expect(backend.log.page(trigger, 2, cursor)).rejects.toThrow(InvalidCursorError);
    }
  });

  it('keeps unauthenticated refusals in their own share: a flood of them never evicts the main entries', async () => {
    const share = unauthenticatedShare(MAX);
    for (let n = 1; n <= MAX; n++) backend.log.append(trigger, entry(n));
    for (let n = 101; n <= 100 + 10 * MAX; n++) backend.log.append(trigger, entry(n), 'unauthenticated');
    const flood = Array.from({ length: share }, (_, i) => `req-${100 + 10 * MAX - i}`);
    const main = ['req-5', 'req-4', 'req-3', 'req-2', 'req-1'];
    await waitUntil(async () => (await readAll(backend.log, trigger)).includes(flood[0]), 'the last refusal');
    // Merged by time: to the millisecond on Redis (stream ids), so only each share's order is certain.
    const all = await readAll(backend.log, trigger);
    expect(all.filter((id) => main.includes(id))).toEqual(main);
    expect(all.filter((id) => !main.includes(id))).toEqual(flood);
    expect(await pageThrough(backend.log, trigger)).toEqual(all);
  });

  it('pages through both shares merged newest first, each share in its order', async () => {
    for (let n = 1; n <= 4; n++) {
      backend.log.append(trigger, entry(n));
      backend.log.append(trigger, entry(10 + n), 'unauthenticated');
    }
    // The main share keeps its 4; the unauthenticated one its last unauthenticatedShare(5) = 2.
    await waitUntil(async () => (await readAll(backend.log, trigger)).length === 6, 'both shares');
    const all = await readAll(backend.log, trigger);
    expect(all.filter((id) => Number(id.slice(4)) < 10)).toEqual(['req-4', 'req-3', 'req-2', 'req-1']);
    expect(all.filter((id) => Number(id.slice(4)) > 10)).toEqual(['req-14', 'req-13']);
    expect(await pageThrough(backend.log, trigger)).toEqual(all);
  });

  it('keeps the logs of two registrations of one path apart', async () => {
    const first: LogTarget = { ...trigger, registration: 'reg-first' };
    const second: LogTarget = { ...trigger, registration: 'reg-second' };
    backend.log.append(first, entry(1));
    backend.log.append(first, entry(2), 'unauthenticated');
    await waitUntil(async () => (await readAll(backend.log, first)).length === 2, 'the first registration\'s entries');
    expect(await readAll(backend.log, second)).toEqual([]);
    backend.log.append(second, entry(3));
    await waitUntil(async () => (await readAll(backend.log, second)).length === 1, 'the second registration\'s entry');
    expect(await readAll(backend.log, second)).toEqual(['req-3']);
    expect(await readAll(backend.log, trigger)).toEqual([]);
  });

  it('shows no entry older than 7 days', async () => {
    backend.log.append(trigger, entry(1));
    await waitUntil(async () => (await readAll(backend.log, trigger)).length === 1, 'the entry');
    backend.advance(7 * DAY_MS + 60_000);
    expect(await readAll(backend.log, trigger)).toEqual([]);
    expect(backend.lost()).toBe(0);
  });
});

describe('RedisDeliveryLog in Redis', () => {
  const setup = setups[0];
  it('keeps one stream per target that expires 7 days after its last write, and counts a write that failed', async () => {
    const prefix = uniquePrefix('deliveries');
    const connection = await setup.connect();
    let lost = 0;
    const log = new RedisDeliveryLog(connection.client, { prefix, maxEntries: MAX, onLost: () => void lost++ });
    log.append(trigger, entry(1));
    await waitUntil(async () => (await setup.keysUnder(prefix)).length === 1, 'the stream');
    const ttls = await setup.keyTtls(prefix);
    expect([...ttls.keys()]).toEqual([`${prefix}deliveries:trigger:orders`]);
    expect([...ttls.values()][0]).toBeGreaterThan(7 * DAY_MS - 60_000);
    expect([...ttls.values()][0]).toBeLessThanOrEqual(7 * DAY_MS);
    await setup.deleteKeys(prefix);

    await connection.close();
    expect(() => log.append(trigger, entry(2))).not.toThrow();
    await waitUntil(() => lost === 1, 'the lost entry counted');
  });
});

describe('MemoryDeliveryLog memory bound', () => {
  it('holds at most maxBytes of entries: past it the least recently written logs are forgotten', async () => {
    const log = new MemoryDeliveryLog({ maxEntries: 10, maxTargets: 100, maxBytes: 20_000 });
    const big = (n: number): DeliveryEntry => ({ ...entry(n), idempotencyKey: 'k'.repeat(250), kind: 'x'.repeat(250), deliveryId: 'd'.repeat(250) });
    const size = JSON.stringify(big(10)).length;
    const targets = Array.from({ length: 6 }, (_, i): LogTarget => ({ kind: 'trigger', id: `t${i}` }));
    for (const target of targets) for (let n = 10; n < 20; n++) log.append(target, big(n));
    expect(log.heldBytes).toBeLessThanOrEqual(20_000);
    expect(log.heldBytes).toBeGreaterThan(20_000 - 11 * size);
    // The last written targets keep their full rings; the first ones were forgotten.
    expect(await readAll(log, targets[5])).toHaveLength(10);
    expect(await readAll(log, targets[4])).toHaveLength(10);
    expect(await readAll(log, targets[0])).toEqual([]);
    await log.close();
    expect(log.heldBytes).toBe(0);
  });

  it('an unauthenticated refusal does not make its log the most recent', async () => {
    const log = new MemoryDeliveryLog({ maxEntries: 10, maxTargets: 2 });
    const [t0, t1, t2] = ['t0', 't1', 't2'].map((id): LogTarget => ({ kind: 'trigger', id }));
    log.append(t0, entry(1));
    log.append(t1, entry(2));
    log.append(t0, entry(3), 'unauthenticated');
    log.append(t2, entry(4));
    expect(await readAll(log, t1)).toEqual([entry(2).requestId]);
    expect(await readAll(log, t0)).toEqual([]);
  });

  it('counts bytes of UTF-8, not UTF-16 units', () => {
    const log = new MemoryDeliveryLog({ maxEntries: 10, maxTargets: 10 });
    const wide: DeliveryEntry = { ...entry(1), kind: 'é€😀'.repeat(50) };
    log.append(trigger, wide);
    expect(log.heldBytes).toBe(Buffer.byteLength(JSON.stringify(wide)));
  });
});
