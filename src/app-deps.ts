import type { Config } from './config/schema';
import type { IdempotencyStore } from './idempotency/store';
import type { BodyBudget } from './ingest/body-budget';
import type { Publisher } from './ingest/ports';
import type { Logger } from './observability/logger';
import type { Metrics } from './observability/metrics';
import type { Registry } from './registry/registry';
import type { createRateLimiter } from './ratelimit/limiter';

export interface DependencyCheck {
  name: string;
  ping(): Promise<void>;
}

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
  /** The sink and stores; /readyz is 200 only while every one answers. */
  checks: DependencyCheck[];
  lifecycle: { draining: boolean };
}
