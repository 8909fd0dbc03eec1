import { MemoryStore, type Store } from 'express-rate-limit';
import type { AppDeps, DependencyCheck } from './app-deps';
import type { Config } from './config/schema';
import { MemoryIdempotencyStore } from './idempotency/memory';
import type { IdempotencyStore } from './idempotency/store';
import type { Lifecycle } from './lifecycle';
import type { Logger } from './observability/logger';
import { createMetrics } from './observability/metrics';
import { MicroBatcher } from './publish/batcher';
import { FileSink } from './publish/file';
import type { Sink } from './publish/sink';
import { createRateLimiter } from './ratelimit/limiter';
import { MemoryRegistry } from './registry/memory';
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
  const adapters = embeddedAdapters(config);
  const batcher = new MicroBatcher(
    adapters.sink,
    {
      maxRecords: config.BATCH_MAX_RECORDS,
      maxBytes: config.BATCH_MAX_BYTES,
      lingerMs: config.BATCH_LINGER_MS,
      queueMax: config.PUBLISH_QUEUE_MAX,
      maxRecordBytes: config.MAX_RECORD_BYTES,
    },
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

function embeddedAdapters(config: Config): Adapters {
  const registry = new MemoryRegistry();
  const idempotency = new MemoryIdempotencyStore();
  const sink = new FileSink(config.EVENTS_DIR);
  return {
    registry,
    idempotency,
    rateLimitStore: () => new MemoryStore(),
    sink,
    connections: [],
    checks: [{ name: 'file', ping: () => sink.ping() }],
  };
}
