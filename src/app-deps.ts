import type { Config } from './config/schema';
import type { DeliveryLog } from './delivery-log/delivery-log';
import type { FileStore } from './files/file-store';
import type { IdempotencyStore } from './idempotency/store';
import type { KeyFetcher } from './keys/key-fetcher';
import type { BodyBudget } from './ingest/body-budget';
import type { Publisher } from './ingest/ports';
import type { Logger } from './observability/logger';
import type { Metrics } from './observability/metrics';
import type { Registry } from './registry/registry';
import type { createRateLimiter } from './ratelimit/limiter';
import type { Tracing } from './tracing/tracing';
import type { DependencyCheck, ProcessState } from './lifecycle';

/** Everything the HTTP app needs, built once by the container. */
export interface AppDeps {
  config: Config;
  logger: Logger;
  metrics: Metrics;
  registry: Registry;
  idempotency: IdempotencyStore;
  publisher: Publisher;
  enforceRateLimits: ReturnType<typeof createRateLimiter>;
  bodyBudget: BodyBudget;
  /** Files by reference (contract §12); absent without S3_BUCKET (files stay inline). */
  files?: FileStore;
  /** Redis, the sink, the triggers file, the file store: reported by /readyz and the metrics, never a reason to be unready. */
  checks: DependencyCheck[];
  lifecycle: ProcessState;
  /** Contract §13: the last DELIVERY_LOG_MAX requests of each trigger and channel; absent when DELIVERY_LOG_MAX=0. */
  deliveryLog?: DeliveryLog;
  /** The process's key fetcher (contract §10.1 F, KEY_FETCH); absent: one is built from the config on first use. */
  keyFetcher?: KeyFetcher;
  /** Trace context for events, and span export when configured; absent: the sender's context passes through. */
  tracing?: Tracing;
}
