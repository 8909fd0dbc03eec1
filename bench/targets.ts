// The servers a benchmark runs side by side, and the Redis they share.
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { KafkaMock } from '../test/helpers/kafka-mock';
import { LINGER_TRADE_OFF_MS } from './goals';
import { BENCH_PUBLIC_BASE_URL } from './scenarios';

const ROOT = join(__dirname, '..', '..');

export interface Target {
  name: string;
  script: string;
  env(): Record<string, string>;
  /** Measured in the goals' scenario only. */
  headlineOnly?: boolean;
  /** Measured only side by side with the target of this name, in the goals' scenario (bench/side-by-side.ts). */
  twinOf?: string;
  /** Produce requests and records so far, for the Produce-per-1000-records column (from the gateway's admin port). */
  produceStats?(port: number): Promise<{ produceRequests: number; records: number }>;
}

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0';
export const BENCH_PREFIX = 'igw-bench:';

export function targets(work: string, registryFile: string, kafka: KafkaMock, baseline?: string): Target[] {
  const unlimited = {
    RATE_LIMIT_DEFAULT: '1000000/60',
    RATE_LIMIT_WORKSPACE: '1000000/60',
    TRIGGERS_FILE: registryFile,
    PUBLIC_BASE_URL: BENCH_PUBLIC_BASE_URL,
  };
  let cell = 0;
  const production = () => ({
    REDIS_URL,
    REDIS_PREFIX: `${BENCH_PREFIX}${++cell}:`,
    KAFKA_BROKERS: kafka.brokers,
    KAFKA_IDEMPOTENT: 'false', // the mock does not serve InitProducerId
  });
  const gateway = join(ROOT, 'dist', 'main.js');
  const embedded = (extra: Record<string, string> = {}) => () => ({ EVENTS_DIR: mkdtempSync(join(work, 'events-')), ...unlimited, ...extra });
  const withRedisKafka = (extra: Record<string, string> = {}) => () => ({ ...production(), ...unlimited, ...extra });
  // The baseline build runs next to the gateway (the goals' lines pair their rounds); the
  // DELIVERY_LOG_MAX=0 twins run at the same time as the gateway instead (side by side).
  return [
    { name: 'floor (bare express 5)', script: join(ROOT, 'dist-bench', 'bench', 'floor.js'), env: () => ({}) },
    {
      name: 'naive receiver (Redis + Kafka)',
      script: join(ROOT, 'dist-bench', 'bench', 'naive.js'),
      env: production,
      produceStats: async (port) => (await (await fetch(`http://127.0.0.1:${port}/stats`)).json()) as { produceRequests: number; records: number },
    },
    {
      // What batching alone reaches on ioredis and kafkajs, without the gateway's features: how far below the naive receiver a goal can be.
      name: 'batched receiver (Redis + Kafka, nothing else)',
      script: join(ROOT, 'dist-bench', 'bench', 'batched.js'),
      env: production,
      headlineOnly: true,
    },
    { name: 'gateway, embedded', script: gateway, env: embedded() },
    { name: 'gateway, embedded, DELIVERY_LOG_MAX=0', script: gateway, env: embedded({ DELIVERY_LOG_MAX: '0' }), twinOf: 'gateway, embedded' },
    ...(baseline ? [{ name: 'baseline build, embedded', script: join(baseline, 'main.js'), env: embedded() }] : []),
    { name: 'gateway, Redis + Kafka', script: gateway, env: withRedisKafka(), produceStats: gatewayProduceStats },
    {
      name: 'gateway, Redis + Kafka, DELIVERY_LOG_MAX=0',
      script: gateway,
      env: withRedisKafka({ DELIVERY_LOG_MAX: '0' }),
      produceStats: gatewayProduceStats,
      twinOf: 'gateway, Redis + Kafka',
    },
    ...(baseline ? [{ name: 'baseline build, Redis + Kafka', script: join(baseline, 'main.js'), env: withRedisKafka(), produceStats: gatewayProduceStats }] : []),
    {
      // The other side of the batching trade-off: fewer, larger Produce requests, paid in throughput and latency.
      name: `gateway, Redis + Kafka, BATCH_LINGER_MS=${LINGER_TRADE_OFF_MS}`,
      script: gateway,
      env: withRedisKafka({ BATCH_LINGER_MS: String(LINGER_TRADE_OFF_MS) }),
      produceStats: gatewayProduceStats,
      headlineOnly: true,
    },
  ];
}

async function gatewayProduceStats(port: number) {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const sum = (name: string) =>
    text
      .split('\n')
      .filter((line) => line.startsWith(name))
      .reduce((total, line) => total + Number(line.split(' ').pop()), 0);
  return { produceRequests: sum('igw_kafka_produce_requests_total'), records: sum('igw_events_published_total') };
}

export async function requireRedis(): Promise<Redis> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 1000 });
  try {
    await redis.connect();
    await redis.ping();
    return redis;
  } catch {
    redis.disconnect();
    throw new Error(`Redis is not reachable at ${REDIS_URL}: start it with redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no`);
  }
}

export async function deleteBenchKeys(redis: Redis): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${BENCH_PREFIX}*`, 'COUNT', 1000);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}
