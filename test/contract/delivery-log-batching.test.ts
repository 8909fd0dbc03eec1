/**
 * The Redis delivery log buffers entries and writes them once the code that appended them has
 * run (process.nextTick), one script call per stream, on one Redis and on a Redis Cluster:
 * - many requests' entries in one flush are all readable, in order, newest first;
 * - the cap holds exactly (the stream is never longer than maxEntries);
 * - close() writes what is buffered before it resolves;
 * - entries that cannot be written (Redis gone, buffer full) are counted lost, append never throws.
 */
import type { DeliveryEntry, LogTarget } from '../../src/delivery-log/delivery-log';
import { RedisDeliveryLog, type RedisDeliveryLogOptions } from '../../src/delivery-log/redis';
import type { RedisConnection } from '../../src/redis/connection';
import { uniquePrefix } from '../helpers/redis';
import { redisSetupRows, type RedisSetup } from '../helpers/redis-setups';
import { waitUntil } from '../helpers/wait';

const MAX = 5;
const orders: LogTarget = { kind: 'trigger', id: 'orders' };
const refunds: LogTarget = { kind: 'trigger', id: 'refunds' };
const entry = (n: number): DeliveryEntry => ({ at: new Date().toISOString(), requestId: `req-${n}`, status: 200, outcome: 'accepted', bytes: n, ms: 1, clientIp: '127.0.0.1' });
const ids = (from: number, to: number) => Array.from({ length: from - to + 1 }, (_, i) => `req-${from - i}`);

describe.each(redisSetupRows())('RedisDeliveryLog batching: %s', (_name, setup: RedisSetup) => {
  let prefix: string;
  let connection: RedisConnection;
  let lost: number;
  let log: RedisDeliveryLog;
  const create = (options: Partial<RedisDeliveryLogOptions> = {}) =>
    new RedisDeliveryLog(connection.client, { prefix, maxEntries: MAX, onLost: () => void lost++, ...options });
  /** Each script call's stream and number of entries (write() sends one call). */
  const scriptCalls = () => writes.mock.calls.map(([key, entries]) => [key, entries.length]);
  const writes = jest.spyOn(RedisDeliveryLog.prototype as unknown as { write(key: string, entries: string[]): void }, 'write');
  const readAll = async (target: LogTarget) => (await log.page(target, 100)).entries.map((e) => e.requestId);
  const streamLength = async (target: LogTarget) => (await setup.admin()).xlen(`${prefix}deliveries:${target.kind}:${target.id}`);

  beforeEach(async () => {
    prefix = uniquePrefix('deliveries-batch');
    connection = await setup.connect();
    lost = 0;
    writes.mockClear();
    log = create();
  });
  afterEach(async () => {
    await log.close();
    await connection.close();
    await setup.deleteKeys(prefix);
  });

  it('writes the entries appended together in one script call per stream, all readable in order, newest first', async () => {
    for (let n = 1; n <= 4; n++) {
      log.append(orders, entry(n));
      log.append(refunds, entry(100 + n));
    }
    expect(scriptCalls()).toEqual([]); // nothing is written before the appending code has run
    await waitUntil(async () => (await readAll(orders)).length === 4 && (await readAll(refunds)).length === 4, 'both streams written');
    expect(scriptCalls()).toEqual([
      [`${prefix}deliveries:trigger:orders`, 4],
      [`${prefix}deliveries:trigger:refunds`, 4],
    ]);
    expect(await readAll(orders)).toEqual(ids(4, 1));
    expect(await readAll(refunds)).toEqual(ids(104, 101));
    expect(lost).toBe(0);
  });

  it('keeps exactly the last maxEntries, within one flush and across flushes', async () => {
    for (let n = 1; n <= 3; n++) log.append(orders, entry(n));
    await waitUntil(async () => (await readAll(orders)).length === 3, 'the first flush');
    for (let n = 4; n <= 2 * MAX + 1; n++) log.append(orders, entry(n));
    await waitUntil(async () => (await readAll(orders))[0] === `req-${2 * MAX + 1}`, 'the second flush');
    expect(await readAll(orders)).toEqual(ids(2 * MAX + 1, MAX + 2));
    expect(await streamLength(orders)).toBe(MAX);
    // A flush of more than maxEntries sends only the last maxEntries: the others would be trimmed at once.
    expect(scriptCalls()[1][1]).toBe(MAX);
    log.append(orders, entry(50));
    await waitUntil(async () => (await readAll(orders))[0] === 'req-50', 'the third flush');
    expect(await readAll(orders)).toEqual(['req-50', ...ids(2 * MAX + 1, MAX + 3)]);
    expect(await streamLength(orders)).toBe(MAX);
    expect(lost).toBe(0);
  });

  it('close() writes the buffered entries before it resolves', async () => {
    for (let n = 1; n <= 3; n++) log.append(orders, entry(n));
    await log.close();
    expect(await readAll(orders)).toEqual(ids(3, 1));
    expect(lost).toBe(0);
  });

  it('counts every entry of a write that failed, and never throws into append', async () => {
    await connection.close();
    expect(() => {
      for (let n = 1; n <= 3; n++) log.append(orders, entry(n));
      log.append(refunds, entry(4));
    }).not.toThrow();
    await log.close();
    expect(lost).toBe(4);
  });

  it('holds at most maxBuffered entries: past it an entry is counted lost at once', async () => {
    log = create({ maxBuffered: 2 });
    for (let n = 1; n <= 5; n++) log.append(orders, entry(n));
    expect(lost).toBe(3);
    await log.close();
    expect(await readAll(orders)).toEqual(ids(2, 1));
    // Once answered, the entries no longer count against the bound.
    log.append(orders, entry(6));
    await log.close();
    expect(await readAll(orders)).toEqual(ids(6, 6).concat(ids(2, 1)));
    expect(lost).toBe(3);
  });
});
