import type { z } from 'zod';
import { configSchema } from './schema';

type SettingName = keyof z.input<typeof configSchema>;

/**
 * One line per setting for `--help` (docs/settings.md says the rest). Typed by the schema's
 * keys: a setting added without its line does not compile.
 */
const SETTING_HELP: Record<SettingName, string> = {
  PORT: 'public listener port (0 = any free port)',
  HOST: 'listen address of both listeners',
  ADMIN_PORT: 'admin listener port: /admin, /metrics, /readyz; must differ from PORT',
  ADMIN_TOKEN: 'bearer token of the admin API; unset: the admin API answers 404',
  TRIGGERS_FILE: 'JSON file of triggers and channels applied to the registry at start',
  PUBLIC_BASE_URL: 'the public origin senders call (Twilio signs it)',
  REDIS_URL: 'redis:// or rediss:// URL: idempotency, limits and registry in Redis',
  REDIS_CLUSTER_NODES: 'a Redis Cluster instead: comma-separated host:port seed nodes',
  REDIS_USERNAME: 'with REDIS_CLUSTER_NODES: the ACL user',
  REDIS_PASSWORD: 'with REDIS_CLUSTER_NODES: the password',
  REDIS_PREFIX: 'prefix of every Redis key',
  REDIS_TIMEOUT_MS: 'Redis connect and command timeout',
  REDIS_TLS_CA_FILE: 'PEM CA of Redis\'s certificate (rediss:// only)',
  REDIS_TLS_CERT_FILE: 'PEM client certificate for Redis',
  REDIS_TLS_KEY_FILE: 'PEM private key of REDIS_TLS_CERT_FILE',
  SECRETS_KEY: '32 random bytes, base64: stored secrets sealed with AES-256-GCM',
  SECRETS_KEY_PREVIOUS: 'the key before the last rotation (still opens its values)',
  REGISTRY_CACHE_MAX_ENTRIES: 'Redis mode: triggers (and channels) cached per pod',
  REGISTRY_NEGATIVE_CACHE_MAX_ENTRIES: 'Redis mode: unknown paths remembered per pod',
  IDEMPOTENCY_ON_STORE_ERROR: 'the store fails: accept (publish anyway) or refuse (503)',
  KEY_FETCH: 'on: fetch allow-listed provider keys not pinned; off: pinned keys only',
  IDEMPOTENCY_MEMORY_MAX_KEYS: 'embedded mode: most idempotency keys in memory',
  IDEMPOTENCY_MEMORY_MAX_BYTES: 'embedded mode: most bytes the idempotency keys take',
  DELIVERY_LOG_MAX: 'delivery log entries per trigger or channel (0 = off)',
  KAFKA_BROKERS: 'comma-separated host:port list: events go to Kafka',
  KAFKA_CLIENT_ID: 'Kafka client id',
  KAFKA_IDEMPOTENT: 'idempotent producer (needs a broker\'s InitProducerId)',
  KAFKA_COMPRESSION: 'none or gzip',
  KAFKA_SSL: 'TLS to the brokers',
  KAFKA_SASL_MECHANISM: 'plain, scram-sha-256 or scram-sha-512',
  KAFKA_SASL_USERNAME: 'SASL user',
  KAFKA_SASL_PASSWORD: 'SASL password',
  TOPIC_TRIGGERS: 'topic of webhook trigger events',
  TOPIC_CHAT: 'topic of chat events',
  EVENTS_DIR: 'file sink folder (embedded mode)',
  PUBLISH_TIMEOUT_MS: 'longest wait for the sink\'s acknowledgement before a 503',
  PUBLISH_QUEUE_MAX: 'records waiting for the sink before requests get 503',
  BATCH_MAX_RECORDS: 'records per batch handed to the sink',
  BATCH_MAX_BYTES: 'bytes per batch',
  BATCH_LINGER_MS: 'how long a batch\'s first record waits for others',
  RATE_LIMIT_DEFAULT: '<requests>/<seconds> per trigger or channel',
  RATE_LIMIT_WORKSPACE: '<requests>/<seconds> per workspace',
  MAX_BODY_BYTES: 'largest webhook body',
  MAX_FILE_BYTES: 'largest file part of a multipart body',
  MAX_FILES: 'file parts per multipart body',
  MAX_FIELDS: 'fields per form or multipart body',
  MAX_RECORD_BYTES: 'largest published record',
  WHATSAPP_MAX_BODY_BYTES: 'largest WhatsApp callback body',
  MAX_INFLIGHT_BODY_BYTES: 'body bytes held in memory by the whole process',
  MAX_INFLIGHT_BODY_SHARE: 'percent of those one route, workspace or address may hold',
  S3_BUCKET: 'files by reference: large file parts stream to this bucket',
  S3_PREFIX: 'put before every object key, ending with /',
  S3_REGION: 'the bucket\'s region (unset: the AWS SDK\'s chain)',
  S3_ENDPOINT: 'an S3-compatible store\'s URL (unset: AWS)',
  S3_FORCE_PATH_STYLE: 'path-style URLs (MinIO and most self-hosted stores)',
  INLINE_FILE_MAX_BYTES: 'with S3_BUCKET: larger file parts go to the bucket',
  SHUTDOWN_GRACE_MS: 'longest SIGTERM drain (raised to the longest drain when unset)',
  OTEL_EXPORTER_OTLP_ENDPOINT: 'OTLP/HTTP collector base URL: spans are exported',
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'full OTLP/HTTP traces URL',
  OTEL_SERVICE_NAME: 'service.name of the exported spans',
  LOG_LEVEL: 'fatal, error, warn, info, debug, trace or silent',
  TRUST_PROXY: 'proxies whose X-Forwarded-For is believed (hop count or addresses)',
  HEADERS_TIMEOUT_MS: 'longest time to receive a request\'s headers (408)',
  REQUEST_TIMEOUT_MS: 'longest time to receive a whole request (408)',
  BODY_MIN_RATE: '<bytes>/<seconds> a body must bring in any window (408)',
  AUTH_FAILURE_LIMIT: '<failures>/<seconds> per client address before 429',
};

/** The `--help` text: every setting with its default, in the schema's order. */
export function settingsHelp(): string {
  const defaults = configSchema.parse({}) as Record<string, unknown>;
  const names = Object.keys(configSchema.shape) as SettingName[];
  const width = Math.max(...names.map((name) => name.length));
  const lines = names.map((name) => {
    const shown = showDefault(defaults[name]);
    return `  ${name.padEnd(width)}  ${shown.padEnd(17)}  ${SETTING_HELP[name]}`;
  });
  return [
    'ingress-gateway: webhook and chat ingress (HTTP in, Redis, Kafka out)',
    '',
    'Usage: node dist/main.js',
    'Settings are environment variables (none set: embedded mode, no Redis, no Kafka).',
    'A bad value exits 2 naming the variable; an unknown one with a known prefix is warned about.',
    '',
    `  ${'setting'.padEnd(width)}  ${'default'.padEnd(17)}  meaning`,
    ...lines,
    '',
    'Every setting in full, and the ones that must fit together: docs/settings.md',
    '',
  ].join('\n');
}

function showDefault(value: unknown): string {
  if (value === undefined) return '(unset)';
  if (typeof value === 'object' && value !== null && 'limit' in value && 'windowSeconds' in value) {
    return `${String(value.limit)}/${String(value.windowSeconds)}`;
  }
  return String(value);
}
