import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** All metrics of one process, on their own registry (tests create several apps per process). */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    requests: new Counter({
      name: 'igw_http_requests_total',
      help: 'HTTP requests by route and outcome',
      labelNames: ['route', 'outcome', 'status'] as const,
      registers: [registry],
    }),
    latency: new Histogram({
      name: 'igw_http_request_duration_seconds',
      help: 'HTTP request latency by route and outcome',
      labelNames: ['route', 'outcome'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    events: new Counter({
      name: 'igw_events_published_total',
      help: 'Events acknowledged by the sink, by type',
      labelNames: ['type'] as const,
      registers: [registry],
    }),
    batches: new Histogram({
      name: 'igw_publish_batch_records',
      help: 'Records per batch handed to the sink',
      buckets: [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000],
      registers: [registry],
    }),
    batchFailures: new Counter({
      name: 'igw_publish_batch_failures_total',
      help: 'Batches the sink did not acknowledge',
      registers: [registry],
    }),
    produceRequests: new Counter({
      name: 'igw_kafka_produce_requests_total',
      help: 'Produce requests sent to Kafka',
      registers: [registry],
    }),
    storeErrors: new Counter({
      name: 'igw_store_errors_total',
      help: 'Requests let through or refused because a store (rate limit, idempotency) failed',
      labelNames: ['store', 'action'] as const,
      registers: [registry],
    }),
    foreignChanges: new Counter({
      name: 'igw_whatsapp_foreign_changes_total',
      help: 'WhatsApp changes for a phone number id that is not the channel\'s, not published',
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
