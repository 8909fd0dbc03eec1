/**
 * A flood of pipelined requests can put tens of thousands of requests in one event-loop turn.
 * Their counters, claims and completions go to Redis in commands of at most
 * MAX_ITEMS_PER_COMMAND items (src/redis/turn-batch.ts): one command for the whole turn spread
 * its arguments into one call, which overflowed V8's stack, so every counter of the turn failed
 * and the rate limits and failed-authentication counts failed open. Real Redis.
 */
import type Redis from 'ioredis';
import { RedisIdempotencyStore } from '../../src/idempotency/redis';
import { RedisCounters } from '../../src/ratelimit/redis-counters';
import { deleteKeys, requireRedis, uniquePrefix } from '../helpers/redis';

/** 20,000 requests: 60,000 counters, 180,000 script arguments, past what one spread call takes. */
const REQUESTS = 20_000;
/** 50,000 claims and completions: 150,000 and 250,000 arguments. */
const CLAIMS = 50_000;

describe('a flood in one turn on Redis', () => {
  let client: Redis;
  let prefix: string;

  beforeAll(async () => {
    client = await requireRedis();
  });

  beforeEach(() => {
    prefix = uniquePrefix('flood');
  });

  afterEach(async () => {
    await deleteKeys(client, prefix);
  });

  afterAll(() => client.disconnect());

  it('counts every request of a 20,000-request turn against its counters, in order (none fails open)', async () => {
    const counters = new RedisCounters(client, prefix, false);
    const calls = [];
    for (let i = 0; i < REQUESTS; i++) {
      calls.push(
        counters.count([
          { key: `client:${i % 100}`, windowMs: 60_000, hit: false },
          { key: 'workspace', windowMs: 60_000, hit: true },
          { key: `trigger:${i % 7}`, windowMs: 60_000, hit: true },
        ]),
      );
    }
    const results = await Promise.all(calls);
    const rejected = results.flat().filter((result) => result.status === 'rejected');
    expect(rejected).toEqual([]);
    const hits = (result: PromiseSettledResult<{ totalHits: number } | undefined>) => (result.status === 'fulfilled' ? result.value?.totalHits : undefined);
    // The workspace's counter saw the requests one after another, as the turn made them.
    expect(results.map(([, workspace]) => hits(workspace))).toEqual(Array.from({ length: REQUESTS }, (_, i) => i + 1));
    // The last request's trigger counter: every request before it with the same trigger, and itself.
    expect(hits(results[REQUESTS - 1][2])).toBe(Math.floor((REQUESTS - 1) / 7) + 1);
    expect(await client.get(`${prefix}workspace`)).toBe(String(REQUESTS));
  });

  it('claims and completes every key of a 50,000-request turn', async () => {
    const store = new RedisIdempotencyStore(client, prefix);
    const claims = await Promise.all(Array.from({ length: CLAIMS }, (_, i) => store.claim(`k-${i}`, `owner-${i}`, 'h', 60_000)));
    expect(claims.filter((claim) => claim.state !== 'claimed')).toEqual([]);
    const response = { status: 200, eventId: 'e' };
    const written = await Promise.all(Array.from({ length: CLAIMS }, (_, i) => store.complete(`k-${i}`, `owner-${i}`, 'h', response, 60_000)));
    expect(written.filter((ok) => !ok)).toEqual([]);
    await expect(store.claim(`k-${CLAIMS - 1}`, 'another', 'h', 60_000)).resolves.toEqual({ state: 'completed', sameBody: true, response });
  });
});
