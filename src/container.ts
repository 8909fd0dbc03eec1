import { MemoryStore } from 'express-rate-limit';
import type { AppDeps } from './app-deps';
import type { Config } from './config/schema';
import { unauthenticatedShare, type DeliveryLog } from './delivery-log/delivery-log';
import { MemoryDeliveryLog } from './delivery-log/memory';
import { RedisDeliveryLog } from './delivery-log/redis';
import { fileStoreFor, type FileStoreSettings } from './files/pick';
import type { HttpServerSettings } from './http/server';
import { MemoryIdempotencyStore } from './idempotency/memory';
import { RedisIdempotencyStore } from './idempotency/redis';
import { BodyBudget } from './ingest/body-budget';
import type { IdempotencyStore } from './idempotency/store';
import type { DependencyCheck, Lifecycle } from './lifecycle';
import type { Logger } from './observability/logger';
import { registerDependencyMetrics } from './observability/dependencies';
import { createMetrics, type Metrics } from './observability/metrics';
import { CHANNEL_FOREIGN_METRICS } from './providers/channels';
import { MicroBatcher, type BatcherOptions } from './publish/batcher';
import { FileSink, type FileSinkSettings } from './publish/file';
import { KafkaSink, type KafkaSettings } from './publish/kafka';
import { TOPIC_STATES, type Sink } from './publish/sink';
import { kafkaTiming, writeTimeoutMs } from './publish/timing';
import { topicName } from './publish/topics';
import { createRateLimiter } from './ratelimit/limiter';
import type { RateCounters } from './ratelimit/counters';
import { RedisCounters } from './ratelimit/redis-counters';
import { StoreCounters } from './ratelimit/store-counters';
import { RedisConnection, type RedisSettings } from './redis/connection';
import { redisTarget } from './redis/target';
import { redisTlsOptions } from './redis/tls';
import { MemoryRegistry } from './registry/memory';
import { RedisRegistry } from './registry/redis';
import type { Registry } from './registry/registry';
import { cipherFromSettings } from './secrets/cipher';
import { processKeyFetcher } from './keys/process-key-fetcher';
import { createTracing, otlpTracesUrl, type Tracing, type TracingSettings } from './tracing/tracing';

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
  /** The rate limits' and failed authentications' counters: in memory, or in Redis (one command a request). */
  rateCounters: RateCounters;
  sink: Sink;
  deliveryLog?: DeliveryLog;
  /** Started before the stores and closed after them (a shared connection). */
  connections: Lifecycle[];
  checks: DependencyCheck[];
}

/** The one place where embedded or production adapters are picked. */
export function createContainer(config: Config, logger: Logger, metrics = createMetrics(CHANNEL_FOREIGN_METRICS), tracing = createTracing(tracingSettings(config), logger)): Container {
  const adapters = pickAdapters(config, logger, metrics, tracing);
  const files = fileStoreFor(fileStoreSettings(config), logger, metrics);
  if (files) adapters.checks.push({ name: files.name, ping: () => files.ping() });
  const batcher = new MicroBatcher(
    tracing.traceSink(adapters.sink),
    batcherOptions(config),
    {
      batchWritten: (records, _bytes, ms, ok) => {
        metrics.batches.observe(records);
        metrics.batchSeconds.observe(ms / 1000);
        if (!ok) metrics.batchFailures.inc();
      },
    },
  );
  const enforceRateLimits = createRateLimiter({
    counters: adapters.rateCounters,
    onStoreError: (error) => {
      metrics.storeErrors.inc({ store: 'ratelimit', action: 'accepted' });
      logger.debug({ err: (error as Error)?.message }, 'rate limit store failed; request let through');
    },
  });
  const bodyBudget = new BodyBudget(config.MAX_INFLIGHT_BODY_BYTES);
  metrics.watch({
    queuedRecords: () => batcher.queued,
    queueMaxRecords: config.PUBLISH_QUEUE_MAX,
    bodyBytesInUse: () => bodyBudget.inUse,
    bodyBytesMax: config.MAX_INFLIGHT_BODY_BYTES,
  });
  const deps: AppDeps = {
    config,
    logger,
    metrics,
    registry: adapters.registry,
    idempotency: tracing.traceMethods(adapters.idempotency, 'idempotency', ['claim', 'complete', 'release']),
    publisher: batcher,
    enforceRateLimits,
    bodyBudget,
    ...(files && { files }),
    checks: adapters.checks,
    lifecycle: { started: false, draining: false },
    tracing,
    keyFetcher: processKeyFetcher(config, metrics),
    ...(adapters.deliveryLog && { deliveryLog: adapters.deliveryLog }),
  };
  const sinkTopics = adapters.sink.topics?.bind(adapters.sink);
  registerDependencyMetrics(metrics.registry, deps.checks, sinkTopics && { states: TOPIC_STATES, current: sinkTopics });
  const stores: Lifecycle[] = [
    adapters.registry,
    adapters.idempotency,
    adapters.sink,
    ...(files ? [files] : []),
    ...(adapters.deliveryLog ? [adapters.deliveryLog] : []),
  ];
  let closed: Promise<void> | undefined;
  return {
    deps,
    batcher,
    async start() {
      for (const connection of adapters.connections) await connection.start();
      await Promise.all(stores.map((store) => store.start()));
      deps.lifecycle.started = true;
    },
    close() {
      closed ??= (async () => {
        await batcher.close();
        await Promise.allSettled(stores.map((store) => store.close()));
        await Promise.allSettled(adapters.connections.map((connection) => connection.close()));
        await tracing.shutdown();
      })();
      return closed;
    },
  };
}

export function batcherOptions(config: Config): BatcherOptions {
  return {
    maxRecords: config.BATCH_MAX_RECORDS,
    maxBytes: config.BATCH_MAX_BYTES,
    lingerMs: config.BATCH_LINGER_MS,
    queueMax: config.PUBLISH_QUEUE_MAX,
    maxRecordBytes: config.MAX_RECORD_BYTES,
    // Past the Kafka sink's own budget (so a stalled broker's write settles by itself before
    // another batch is stacked onto it), and short enough that a drain ends within the grace.
    writeTimeoutMs: writeTimeoutMs(config.PUBLISH_TIMEOUT_MS),
  };
}

function pickAdapters(config: Config, logger: Logger, metrics: Metrics, tracing: Tracing): Adapters {
  const redis = redisSettings(config);
  const stores = redis ? redisStores(config, redis, logger, tracing, metrics) : memoryStores(config);
  const kafka = kafkaSettings(config);
  const sink: Sink = kafka
    ? new KafkaSink(kafka, { logger, onProduceRequest: () => metrics.produceRequests.inc() })
    : new FileSink(fileSinkSettings(config));
  const sinkCheck = {
    name: 'sink',
    ping: () => sink.ping(),
    report: () => {
      const topics = sink.topics?.();
      if (!topics) return { detail: { kind: sink.name } };
      const states = Object.values(topics);
      const state = states.includes('missing') || states.includes('unauthorized') ? 'topic_missing' : undefined;
      return { state, detail: { kind: sink.name, topics } };
    },
  };
  return { ...stores, sink, checks: [...stores.checks, sinkCheck] };
}

/** The Kafka sink's section (KAFKA_*, both topics, the timings of PUBLISH_TIMEOUT_MS); undefined without KAFKA_BROKERS. */
export function kafkaSettings(config: Config): KafkaSettings | undefined {
  if (!config.KAFKA_BROKERS) return undefined;
  const { KAFKA_SASL_MECHANISM: mechanism, KAFKA_SASL_USERNAME: username, KAFKA_SASL_PASSWORD: password } = config;
  return {
    brokers: config.KAFKA_BROKERS,
    clientId: config.KAFKA_CLIENT_ID,
    idempotent: config.KAFKA_IDEMPOTENT,
    compression: config.KAFKA_COMPRESSION,
    topics: [topicName(config, 'triggers'), topicName(config, 'chat')],
    timing: kafkaTiming(config.PUBLISH_TIMEOUT_MS),
    ssl: config.KAFKA_SSL,
    sasl: mechanism && username && password ? { mechanism, username, password } : undefined,
  };
}

/** The file sink's section (EVENTS_DIR). */
export function fileSinkSettings(config: Config): FileSinkSettings {
  return { dir: config.EVENTS_DIR };
}

/** The file store's section (S3_*, its calls bounded by PUBLISH_TIMEOUT_MS); undefined without S3_BUCKET. */
export function fileStoreSettings(config: Config): FileStoreSettings | undefined {
  if (!config.S3_BUCKET) return undefined;
  return {
    bucket: config.S3_BUCKET,
    prefix: config.S3_PREFIX ?? '',
    region: config.S3_REGION,
    endpoint: config.S3_ENDPOINT,
    forcePathStyle: config.S3_FORCE_PATH_STYLE,
    timeoutMs: config.PUBLISH_TIMEOUT_MS,
  };
}

/** The HTTP listeners' section (HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS). */
export function httpServerSettings(config: Config): HttpServerSettings {
  return { headersTimeoutMs: config.HEADERS_TIMEOUT_MS, requestTimeoutMs: config.REQUEST_TIMEOUT_MS };
}

/** Tracing's section (OTEL_*): where spans go, if anywhere, and the service name. */
export function tracingSettings(config: Config): TracingSettings {
  return { tracesUrl: otlpTracesUrl(config), serviceName: config.OTEL_SERVICE_NAME };
}

/** The Redis connection's section (REDIS_URL or REDIS_CLUSTER_NODES, REDIS_TIMEOUT_MS, REDIS_TLS_*); undefined in embedded mode. */
export function redisSettings(config: Config): RedisSettings | undefined {
  const target = redisTarget(config);
  if (!target) return undefined;
  return { target, timeoutMs: config.REDIS_TIMEOUT_MS, tls: redisTlsOptions(config) };
}

type Stores = Omit<Adapters, 'sink'>;

function memoryStores(config: Config): Stores {
  return {
    registry: new MemoryRegistry(),
    idempotency: new MemoryIdempotencyStore({ maxKeys: config.IDEMPOTENCY_MEMORY_MAX_KEYS, maxBytes: config.IDEMPOTENCY_MEMORY_MAX_BYTES }),
    rateCounters: new StoreCounters(() => new MemoryStore()),
    ...(config.DELIVERY_LOG_MAX > 0 && { deliveryLog: new MemoryDeliveryLog(memoryDeliveryLogSize(config.DELIVERY_LOG_MAX)) }),
    connections: [],
    checks: [],
  };
}

/** One connection shared by the stores; the registry adds a subscriber for invalidations. */
function redisStores(config: Config, settings: RedisSettings, logger: Logger, tracing: Tracing, metrics: Metrics): Stores {
  const connection = new RedisConnection(settings, logger);
  tracing.instrumentRedis(connection.client);
  return {
    registry: new RedisRegistry(connection, config.REDIS_PREFIX, logger, {
      cipher: cipherFromSettings(config),
      maxCacheEntries: config.REGISTRY_CACHE_MAX_ENTRIES,
      maxMissingEntries: config.REGISTRY_NEGATIVE_CACHE_MAX_ENTRIES,
    }),
    idempotency: new RedisIdempotencyStore(connection.client, config.REDIS_PREFIX),
    rateCounters: new RedisCounters(connection.client, config.REDIS_PREFIX, connection.isCluster),
    ...(config.DELIVERY_LOG_MAX > 0 && {
      deliveryLog: new RedisDeliveryLog(connection.client, {
        prefix: config.REDIS_PREFIX,
        maxEntries: config.DELIVERY_LOG_MAX,
        onLost: () => metrics.deliveryLogLost.inc(),
      }),
    }),
    connections: [connection],
    checks: [{ name: 'redis', ping: () => connection.ping() }],
  };
}

/** Embedded mode keeps at most 100,000 entries in all (about 40 MB): fewer logs when each keeps more. */
export function memoryDeliveryLogSize(maxEntries: number): { maxEntries: number; maxTargets: number } {
  // Each target's log holds up to maxEntries plus its unauthenticated share (contract §13.1).
  return { maxEntries, maxTargets: Math.max(1, Math.floor(100_000 / (maxEntries + unauthenticatedShare(maxEntries)))) };
}
