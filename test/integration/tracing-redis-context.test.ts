/**
 * With spans exported, a Redis command's span is started in the context of the request that
 * issued it, even when another command (here one outside any request) was issued in the same
 * tick: with ioredis' auto-pipelining both would reach sendCommand a tick later, in the first
 * caller's context, and the request's span would be missing (a CI flake of tracing-otlp).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Span } from '@opentelemetry/api';
import { RedisConnection } from '../../src/redis/connection';
import { instrumentRedisClient } from '../../src/tracing/redis';
import { REDIS_TEST_URL, requireRedis, silentLogger, uniquePrefix } from '../helpers/redis';
import { readyConnection } from '../helpers/redis-setups';

describe('Redis spans under auto-pipelining', () => {
  it("each command's span gets the context of its own caller", async () => {
    (await requireRedis()).disconnect();
    const connection = new RedisConnection({ target: REDIS_TEST_URL, timeoutMs: 1000 }, silentLogger());
    await readyConnection(connection);
    try {
      const request = new AsyncLocalStorage<string>();
      const started: Array<{ name: string; parent: string | undefined }> = [];
      instrumentRedisClient(connection.client, (name) => {
        started.push({ name, parent: request.getStore() });
        return { end: () => undefined, setStatus: () => undefined } as unknown as Span;
      });
      const key = `${uniquePrefix('span')}k`;
      const outside = connection.client.exists(key); // no request: no span
      const inside = request.run('request-1', () => connection.client.get(key));
      await Promise.all([outside, inside]);
      expect(started).toEqual([
        { name: 'EXISTS', parent: undefined },
        { name: 'GET', parent: 'request-1' },
      ]);
    } finally {
      await connection.close();
    }
  });
});
