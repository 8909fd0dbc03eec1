import { MemoryStore } from 'express-rate-limit';
import type { AppDeps } from '../../src/app-deps';
import { createAdminApp, createApp } from '../../src/app';
import { batcherOptions, memoryDeliveryLogSize } from '../../src/container';
import { MemoryDeliveryLog } from '../../src/delivery-log/memory';
import { configSchema, type Config } from '../../src/config/schema';
import { MemoryIdempotencyStore } from '../../src/idempotency/memory';
import type { IdempotencyStore } from '../../src/idempotency/store';
import { processKeyFetcher } from '../../src/keys/process-key-fetcher';
import { BodyBudget } from '../../src/ingest/body-budget';
import { CHANNEL_FOREIGN_METRICS } from '../../src/providers/channels';
import { createMetrics } from '../../src/observability/metrics';
import { MicroBatcher } from '../../src/publish/batcher';
import { createRateLimiter } from '../../src/ratelimit/limiter';
import { StoreCounters } from '../../src/ratelimit/store-counters';
import { MemoryRegistry } from '../../src/registry/memory';
import { toStoredChannel, toStoredTrigger } from '../../src/registry/records';
import type { ChannelInput, TriggerInput } from '../../src/registry/schemas';
import { CaptureSink } from './capture-sink';
import type { TestClock } from './clock';
import { loggerToLines } from './log-lines';

export const ADMIN_TOKEN = 'admin-token-for-tests';

/**
 * The app in-process with the memory stores and a capturing sink. Settings are parsed by
 * the real config schema, so defaults are the product's.
 */
export interface TestAppOptions {
  /** Leave ADMIN_TOKEN unset (the admin API then answers 404). */
  withoutAdminToken?: boolean;
  /**
   * The idempotency store's clock. Rate-limit windows (express-rate-limit's MemoryStore) read
   * Date.now(): install() the clock for them.
   */
  clock?: TestClock;
  /** Another idempotency store (a Redis one) in place of the memory store. */
  idempotency?: IdempotencyStore;
  /** How the key fetcher reaches key hosts (a local stand-in: resolver, dial, CA); absent: the system's. */
  keyTransport?: Parameters<typeof processKeyFetcher>[2];
}

/** The key fetcher's resolver when a test gives none: a test must never reach a provider's real key server. */
async function refuseToResolve(hostname: string): Promise<never> {
  throw new Error(`test tried to resolve ${hostname}`);
}

export function testApp(env: Record<string, string> = {}, options: TestAppOptions = {}) {
  const defaults: Record<string, string> = options.withoutAdminToken ? {} : { ADMIN_TOKEN };
  const config: Config = Object.freeze(configSchema.parse({ ...defaults, PUBLISH_TIMEOUT_MS: '500', ...env }));
  const { logger, logLines } = loggerToLines();

  const metrics = createMetrics(CHANNEL_FOREIGN_METRICS);
  const sink = new CaptureSink();
  const registry = new MemoryRegistry();
  const idempotency = options.idempotency ?? new MemoryIdempotencyStore({ maxKeys: config.IDEMPOTENCY_MEMORY_MAX_KEYS, maxBytes: config.IDEMPOTENCY_MEMORY_MAX_BYTES, now: options.clock?.now });
  const batcher = new MicroBatcher(sink, batcherOptions(config));
  const deps: AppDeps = {
    config,
    logger,
    metrics,
    registry,
    idempotency,
    publisher: batcher,
    bodyBudget: new BodyBudget(config.MAX_INFLIGHT_BODY_BYTES),
    enforceRateLimits: createRateLimiter({ counters: new StoreCounters(() => new MemoryStore()), onStoreError: () => undefined }),
    checks: [{ name: 'sink', ping: () => sink.ping() }],
    lifecycle: { started: true, draining: false },
    // Without a test's own transport, no key fetch may leave this machine: resolving a host fails loudly.
    keyFetcher: processKeyFetcher(config, metrics, options.keyTransport ?? { resolver: refuseToResolve }),
    ...(config.DELIVERY_LOG_MAX > 0 && { deliveryLog: new MemoryDeliveryLog(memoryDeliveryLogSize(config.DELIVERY_LOG_MAX)) }),
  };
  return {
    /** The public listener: ingress routes and /healthz. */
    app: createApp(deps),
    /** The admin listener: /admin, /metrics, /readyz. */
    admin: createAdminApp(deps),
    deps,
    sink,
    registry,
    logLines,
    addTrigger: (path: string, input: TriggerInput) => registry.triggers.put(path, toStoredTrigger(input)),
    addChannel: (id: string, input: ChannelInput) => registry.channels.put(id, toStoredChannel(input)),
  };
}
