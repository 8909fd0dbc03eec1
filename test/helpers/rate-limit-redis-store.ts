import { createHash } from 'node:crypto';
import type { ClientRateLimitInfo, IncrementResponse, Options, Store } from 'express-rate-limit';
import type { RedisClient } from '../../src/redis/connection';
import { RedisStore, type RedisReply } from 'rate-limit-redis';

const isNoScript = (error: unknown) => error instanceof Error && /^NOSCRIPT(?:\s|$)/.test(error.message);

/**
 * rate-limit-redis as the gateway used it before its counters moved into RedisCounters (one
 * script call per request): the reference RedisCounters shares keys and values with, so pods
 * of either release count together (test/contract/rate-counters.test.ts). An express-rate-limit
 * store whose counters live in Redis, shared by every process that uses the same prefix.
 *
 * Guard against rate-limit-redis 6's script cache. Its init() runs `SCRIPT LOAD` once and
 * keeps the *promise* of the SHA; every increment/get awaits that promise before EVALSHA and
 * reloads it only after a NOSCRIPT reply. With our client (no offline queue, so commands fail
 * at once while Redis is down) a load attempted while Redis is unreachable leaves a rejected
 * promise behind: every later call rethrows that old error and the limiter never recovers,
 * even when Redis is back. The same happens if the reload after a NOSCRIPT (Redis restarted,
 * script cache empty) meets a dropped connection.
 *
 * So `SCRIPT LOAD` never reaches Redis here: sendCommand answers it with the script's SHA1
 * computed locally (what Redis would return) and remembers the script. EVALSHA goes to Redis
 * and, on NOSCRIPT, is sent again as EVAL with the remembered script (which also caches it on
 * the server). The SHA promise can therefore never be rejected, rate-limit-redis never sees a
 * NOSCRIPT, and each call fails or succeeds on its own: the store heals as soon as Redis is back.
 *
 * While Redis is unreachable increment() rejects within the connection's command timeout;
 * the limiter (passOnStoreError: true) lets the request through.
 */
export function createRedisRateLimitStore(client: RedisClient, prefix: string): Store {
  const scripts = new Map<string, string>();

  const sendCommand = async (...args: string[]): Promise<RedisReply> => {
    const [command, ...rest] = args;
    const name = command.toUpperCase();
    if (name === 'SCRIPT' && rest[0]?.toUpperCase() === 'LOAD' && typeof rest[1] === 'string') {
      const sha = createHash('sha1').update(rest[1]).digest('hex');
      scripts.set(sha, rest[1]);
      return sha;
    }
    if (name === 'EVALSHA') {
      const [sha, ...evalArgs] = rest;
      try {
        return (await client.call('EVALSHA', sha, ...evalArgs)) as RedisReply;
      } catch (error) {
        const lua = scripts.get(sha);
        if (!isNoScript(error) || lua === undefined) throw error;
        return (await client.call('EVAL', lua, ...evalArgs)) as RedisReply;
      }
    }
    return (await client.call(command, ...rest)) as RedisReply;
  };

  return new GuardedRedisStore(new RedisStore({ sendCommand, prefix }));
}

/**
 * rate-limit-redis with one more fix: its get() of a key that does not exist answers
 * `totalHits: NaN` over ioredis (the script's nil comes back as null, which it parses as a
 * number); like MemoryStore, this answers undefined.
 */
class GuardedRedisStore implements Store {
  readonly localKeys = false;
  readonly prefix: string;

  constructor(private readonly inner: RedisStore) {
    this.prefix = inner.prefix;
  }

  init(options: Options): Promise<void> {
    return this.inner.init(options);
  }

  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    const info = await this.inner.get(key);
    return info && Number.isFinite(info.totalHits) ? info : undefined;
  }

  increment(key: string): Promise<IncrementResponse> {
    return this.inner.increment(key);
  }

  decrement(key: string): Promise<void> {
    return this.inner.decrement(key);
  }

  resetKey(key: string): Promise<void> {
    return this.inner.resetKey(key);
  }
}
