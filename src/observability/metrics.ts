import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** What the gauges read at each scrape; set once by the container (watch()). Unset: 0. */
export interface GaugeSources {
  queuedRecords(): number;
  queueMaxRecords: number;
  bodyBytesInUse(): number;
  bodyBytesMax: number;
}

/** A channel's own counter of items addressed to another number or account (its module declares it). */
export interface ChannelForeignMetric {
  channel: string;
  name: string;
  help: string;
}

/**
 * All metrics of one process, on their own registry (tests create several apps per process).
 * `channelMetrics`: the counters the channel modules declare (src/providers/channels.ts).
 */
export function createMetrics(channelMetrics: readonly ChannelForeignMetric[] = []) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const sources: Partial<GaugeSources> = {};
  return {
    registry,
    /** Points the gauges at what they read. */
    watch(watched: GaugeSources): void {
      Object.assign(sources, watched);
    },
    requests: new Counter({
      name: 'igw_http_requests_total',
      help: 'HTTP requests by route, outcome and reason (src/outcomes/reasons.ts)',
      labelNames: ['route', 'outcome', 'reason', 'status'] as const,
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
    batchSeconds: new Histogram({
      name: 'igw_publish_batch_duration_seconds',
      help: 'Time from handing a batch to the sink until it acknowledged or failed it',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
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
    providerRedeliveries: new Counter({
      name: 'igw_provider_redeliveries_total',
      help: 'Verified provider deliveries whose delivery id was already accepted with other bytes: answered as a replay, not published',
      labelNames: ['provider'] as const,
      registers: [registry],
    }),
    providerUnknownKinds: new Counter({
      name: 'igw_provider_unknown_kinds_total',
      help: 'Verified provider deliveries whose derived kind the provider catalogue does not list (unknown_kind): published unless a glob excludes them, and logged',
      labelNames: ['provider'] as const,
      registers: [registry],
    }),
    providerEventsIgnored: new Counter({
      name: 'igw_provider_events_ignored_total',
      help: 'Verified provider deliveries whose kind the trigger\'s events globs filter out: answered 200, not published',
      labelNames: ['provider'] as const,
      registers: [registry],
    }),
    providerKeyFetches: new Counter({
      name: 'igw_provider_key_fetch_total',
      help: 'Key fetches a signed delivery caused (certificates, JWKS, key APIs), by outcome: ok, or why no key was fetched',
      labelNames: ['preset', 'outcome'] as const,
      registers: [registry],
    }),
    providerKeyCacheHits: new Counter({
      name: 'igw_provider_key_cache_hits_total',
      help: 'Signed deliveries whose fetched key came from the per-pod key cache',
      labelNames: ['preset'] as const,
      registers: [registry],
    }),
    /** By channel name: items for another number or account, where the channel's module declares a counter of its own. */
    foreignByChannel: new Map(channelMetrics.map(({ channel, name, help }) => [channel, new Counter({ name, help, registers: [registry] })])),
    deliveryLogLost: new Counter({
      name: 'igw_delivery_log_lost_total',
      help: 'Delivery log entries that could not be written (Redis failed); the requests were served',
      registers: [registry],
    }),
    queuedRecords: new Gauge({
      name: 'igw_publish_queue_records',
      help: 'Records waiting for the sink (not yet in a batch being written)',
      registers: [registry],
      collect() {
        this.set(sources.queuedRecords?.() ?? 0);
      },
    }),
    queueMaxRecords: new Gauge({
      name: 'igw_publish_queue_max_records',
      help: 'PUBLISH_QUEUE_MAX: past it requests get 503 queue_full',
      registers: [registry],
      collect() {
        this.set(sources.queueMaxRecords ?? 0);
      },
    }),
    bodyBytesInUse: new Gauge({
      name: 'igw_body_budget_bytes_in_use',
      help: 'Request body bytes held in memory right now, across all requests',
      registers: [registry],
      collect() {
        this.set(sources.bodyBytesInUse?.() ?? 0);
      },
    }),
    bodyBytesMax: new Gauge({
      name: 'igw_body_budget_bytes_max',
      help: 'MAX_INFLIGHT_BODY_BYTES: past it requests get 503 busy',
      registers: [registry],
      collect() {
        this.set(sources.bodyBytesMax ?? 0);
      },
    }),
    chatItemsSkipped: new Counter({
      name: 'igw_chat_items_skipped_total',
      help: 'Items of chat deliveries not published: invalid (unreadable), foreign (for another number or account), ignored (not a chat event)',
      labelNames: ['provider', 'reason'] as const,
      registers: [registry],
    }),
    ...fileStoreMetrics(registry),
  };
}

/** Files by reference (contract §12): what the file store holds and how it answers. */
function fileStoreMetrics(registry: Registry) {
  return {
    fileBytesStored: new Counter({
      name: 'igw_file_store_bytes_total',
      help: 'Bytes of file parts stored in the file store (S3)',
      registers: [registry],
    }),
    fileObjects: new Counter({
      name: 'igw_file_store_objects_total',
      help: 'Objects stored in the file store (op=stored), and keys cleaned again because their request was not acknowledged (op=cleaned)',
      labelNames: ['op'] as const,
      registers: [registry],
    }),
    fileStoreFailures: new Counter({
      name: 'igw_file_store_failures_total',
      help: 'File store calls that failed or timed out, by operation (put, clean, ping)',
      labelNames: ['op'] as const,
      registers: [registry],
    }),
    fileUploadSeconds: new Histogram({
      name: 'igw_file_store_upload_seconds',
      help: 'Time from the first byte of a file part to its object stored (it follows the sender\'s pace)',
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers: [registry],
    }),
    fileObjectsKept: new Counter({
      name: 'igw_file_objects_kept_total',
      help: 'Objects of unacknowledged requests left for the lifecycle rule because the sink may still hold their event (a publish or Kafka request that timed out)',
      registers: [registry],
    }),
    fileCleanupPending: new Gauge({
      name: 'igw_file_store_cleanup_pending',
      help: 'Keys of unacknowledged requests still to be deleted (the store failed; retried in the background)',
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
