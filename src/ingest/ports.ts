import type { Config } from '../config/schema';
import type { IdempotencyStore } from '../idempotency/store';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import type { OutRecord } from '../publish/sink';

export interface Publisher {
  publish(records: OutRecord[], timeoutMs: number): Promise<void>;
}

/** What the ingest functions need; express never reaches below the routes. */
export interface IngestDeps {
  config: Config;
  idempotency: IdempotencyStore;
  publisher: Publisher;
  logger: Logger;
  metrics: Metrics;
}
