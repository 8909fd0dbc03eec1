import { MemoryStore, type Store } from 'express-rate-limit';
import type { AppDeps, DependencyCheck } from './app-deps';
import type { Config } from './config/schema';
import { MemoryIdempotencyStore } from './idempotency/memory';
import { RedisIdempotencyStore } from './idempotency/redis';
import { BodyBudget } from './ingest/body-budget';
import type { IdempotencyStore } from './idempotency/store';
import type { Lifecycle } from './lifecycle';
import type { Logger } from './observability/logger';
import { createMetrics, type Metrics } from './observability/metrics';
import { MicroBatcher, type BatcherOptions } from './publish/batcher';
import { FileSink } from './publish/file';
import { KafkaSink } from './publish/kafka';
import type { Sink } from './publish/sink';
import { createRateLimiter } from './ratelimit/limiter';
import { createRedisRateLimitStore } from './ratelimit/redis-store';
import { RedisConnection } from './redis/connection';
import { MemoryRegistry } from './registry/memory';
import { RedisRegistry } from './registry/redis';
import type { Registry } from './registry/registry';

export interface Container {
  deps: AppDeps;
  batcher: MicroBatcher;
  start(): Promise<void>;
  /** Flushes the batcher, then closes every adapter. Safe twice. */
  close(): Promise<void>;
}

interface Adapters {
  registry: Registry;
  idempotency: IdempotencyStore;
  rateLimitStore(prefix: string): Store;
  sink: Sink;
  /** Started before the stores and closed after them (a shared connection). */
  connections: Lifecycle[];
  checks: DependencyCheck[];
}

/** The one place where embedded or production adapters are picked. */
export function createContainer(config: Config, logger: Logger, metrics = createMetrics()): Container {
  const adapters = pickAdapters(config, logger, metrics);
  const batcher = new MicroBatcher(
    adapters.sink,
    batcherOptions(config),
    {
      batchWritten: (records, _bytes, _ms, ok) => {
        metrics.batches.observe(records);
        if (!ok) metrics.batchFailures.inc();
      },
    },
  );
  const enforceRateLimits = createRateLimiter({
    storeFor: adapters.rateLimitStore,
    onStoreError: (error) => {
      metrics.storeErrors.inc({ store: 'ratelimit', action: 'accepted' });
      logger.debug({ err: (error as Error)?.message }, 'rate limit store failed; request let through');
    },
  });
  const deps: AppDeps = {
    config,
    logger,
    metrics,
    registry: adapters.registry,
    idempotency: adapters.idempotency,
    publisher: batcher,
    enforceRateLimits,
    bodyBudget: new BodyBudget(config.MAX_INFLIGHT_BODY_BYTES),
    checks: adapters.checks,
    lifecycle: { draining: false },
  };
  const stores: Lifecycle[] = [adapters.registry, adapters.idempotency, adapters.sink];
  let closed: Promise<void> | undefined;
  return {
    deps,
    batcher,
    async start() {
      for (const connection of adapters.connections) await connection.start();
      await Promise.all(stores.map((store) => store.start()));
    },
    close() {
      closed ??= (async () => {
        await batcher.close();
        await Promise.allSettled(stores.map((store) => store.close()));
        await Promise.allSettled(adapters.connections.map((connection) => connection.close()));
      })();
      return closed;
    },
  };
}

const WRITE_TIMEOUT_FLOOR_MS = 30_000;

export function batcherOptions(config: Config): BatcherOptions {
  return {
    maxRecords: config.BATCH_MAX_RECORDS,
    maxBytes: config.BATCH_MAX_BYTES,
    lingerMs: config.BATCH_LINGER_MS,
    queueMax: config.PUBLISH_QUEUE_MAX,
    maxRecordBytes: config.MAX_RECORD_BYTES,
    // Far past the Kafka sink's own request timeouts, so a stalled broker's write settles by
    // itself before another batch is stacked onto it (each such batch would land after the
    // stall although its senders got 503: a duplicate per retry). Only a sink that can hang
    // for good (an fsync on a dead disk) ever reaches it.
    writeTimeoutMs: Math.max(WRITE_TIMEOUT_FLOOR_MS, 3 * config.PUBLISH_TIMEOUT_MS),
  };
}

function pickAdapters(config: Config, logger: Logger, metrics: Metrics): Adapters {
  const stores = config.REDIS_URL ? redisStores(config, config.REDIS_URL, logger) : memoryStores();
  const sink = config.KAFKA_BROKERS
    ? new KafkaSink({
        brokers: config.KAFKA_BROKERS,
        clientId: config.KAFKA_CLIENT_ID,
        idempotent: config.KAFKA_IDEMPOTENT,
        compression: config.KAFKA_COMPRESSION,
        logger,
        onProduceRequest: () => metrics.produceRequests.inc(),
      })
    : new FileSink(config.EVENTS_DIR);
  return { ...stores, sink, checks: [...stores.checks, { name: sink.name, ping: () => sink.ping() }] };
}

type Stores = Omit<Adapters, 'sink'>;

function memoryStores(): Stores {
  return {
    registry: new MemoryRegistry(),
    idempotency: new MemoryIdempotencyStore(),
    rateLimitStore: () => new MemoryStore(),
    connections: [],
    checks: [],
  };
}

/** One connection shared by the stores; the registry adds a subscriber for invalidations. */
function redisStores(config: Config, url: string, logger: Logger): Stores {
  const connection = new RedisConnection(url, config.REDIS_TIMEOUT_MS, logger);
  return {
    registry: new RedisRegistry(connection, config.REDIS_PREFIX, logger),
    idempotency: new RedisIdempotencyStore(connection.client, config.REDIS_PREFIX),
    rateLimitStore: (prefix) => createRedisRateLimitStore(connection.client, `${config.REDIS_PREFIX}${prefix}`),
    connections: [connection],
    checks: [{ name: 'redis', ping: () => connection.ping() }],
  };
}
