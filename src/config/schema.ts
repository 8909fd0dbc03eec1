import { accessSync, constants } from 'node:fs';
import { isIP } from 'node:net';
import { z } from 'zod';
import { listenerProblems, type ListenerSettings } from './rules';

const int = (min: number, max: number) =>
  z.coerce
    .number({ error: (issue) => (issue.code === 'invalid_type' ? 'must be a number' : undefined) })
    .int('must be a whole number')
    .min(min)
    .max(max);
const topic = z.string().regex(/^[A-Za-z0-9._-]{1,249}$/, 'a Kafka topic name: letters, digits, . _ -');
const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
const optionalText = z.string().min(1).optional();

/** `<requests>/<seconds>`, e.g. `600/60`. */
const rateSpec = z
  .string()
  .regex(/^[1-9][0-9]{0,6}\/[1-9][0-9]{0,4}$/, 'must be <requests>/<seconds>, e.g. 600/60')
  .transform((spec) => {
    const [limit, windowSeconds] = spec.split('/').map(Number);
    return { limit, windowSeconds };
  });

/** 32 random bytes in base64, as `openssl rand -base64 32` prints them. */
const secretsKey = z
  .string()
  .regex(/^[A-Za-z0-9+/]{43}=?$/, 'must be 32 random bytes in base64 (openssl rand -base64 32)')
  .refine((value) => new Set(Buffer.from(value, 'base64')).size > 1, 'is not random (every byte the same)');

const readableFile = z.string().refine((path) => {
  try {
    accessSync(path, constants.R_OK);
    return true;
  } catch {
    return false;
  }
}, 'must name a file this process can read');

/**
 * Seed nodes of a Redis Cluster: `host:port`, or `redis://host:port` / `rediss://host:port`
 * (TLS), one scheme for all. Credentials go in REDIS_PASSWORD (and REDIS_USERNAME), not here.
 */
const clusterNodes = z
  .string()
  .transform((list) => list.split(',').map((n) => n.trim()).filter(Boolean))
  .pipe(
    z
      .array(z.string().regex(/^(rediss?:\/\/)?[^\s:,/@]+:[0-9]{1,5}$/, 'each node must be host:port, redis://host:port or rediss://host:port (the password goes in REDIS_PASSWORD)'))
      .min(1)
      .refine((nodes) => new Set(nodes.map((n) => n.startsWith('rediss://'))).size === 1, 'every node must use TLS (rediss://) or none'),
  );

const brokers = z
  .string()
  .transform((list) => list.split(',').map((b) => b.trim()).filter(Boolean))
  .pipe(z.array(z.string().regex(/^[^\s:,]+:[0-9]{1,5}$/, 'each broker must be host:port')).min(1));

/**
 * TRUST_PROXY, as express's `trust proxy` takes it: `false`, a hop count, or a comma-separated
 * list of addresses, CIDR ranges and the names loopback, linklocal, uniquelocal. `true` (trust
 * every hop) is refused: the client address would then be whatever the sender writes first in
 * X-Forwarded-For, so a guesser could dodge the failed-authentication throttle with a new
 * address each try, or spend another address's allowance to lock it out.
 */
const trustProxy = z
  .string()
  .refine((value) => value !== 'true', {
    error:
      'true would believe every X-Forwarded-For hop, so any sender could pick its own client address (and dodge or aim the failed-authentication throttle); name the proxies instead: a hop count (e.g. 1) or their addresses/subnets (e.g. 10.0.0.0/8)',
    abort: true,
  })
  .refine((value) => /^(true|false|[0-9]{1,2})$/.test(value) || value.split(',').every((entry) => isProxyAddress(entry.trim())), {
    error: 'must be true, false, a hop count, or a comma-separated list of addresses, CIDR ranges, loopback, linklocal, uniquelocal',
  })
  .transform((value): boolean | number | string => {
    if (value === 'true' || value === 'false') return value === 'true';
    return /^[0-9]+$/.test(value) ? Number(value) : value;
  });

function isProxyAddress(entry: string): boolean {
  if (['loopback', 'linklocal', 'uniquelocal'].includes(entry)) return true;
  const [address, bits, extra] = entry.split('/');
  const version = isIP(address);
  if (version === 0 || extra !== undefined) return false;
  return bits === undefined || (/^[0-9]{1,3}$/.test(bits) && Number(bits) <= (version === 4 ? 32 : 128));
}

/**
 * Who can hold what, and for how long: the two listeners, the client address, request
 * timeouts and abuse limits (docs/security.md).
 */
const httpSettings = {
  ADMIN_PORT: int(0, 65535).default(8081),
  TRUST_PROXY: trustProxy.optional(),
  HEADERS_TIMEOUT_MS: int(100, 600_000).default(10_000),
  REQUEST_TIMEOUT_MS: int(100, 600_000).default(15_000),
  BODY_MIN_RATE: rateSpec.default(() => ({ limit: 1024, windowSeconds: 5 })),
  // Room for a sender's misconfigured retries; 100 guesses a minute are still nothing against a random token.
  AUTH_FAILURE_LIMIT: rateSpec.default(() => ({ limit: 100, windowSeconds: 60 })),
  MAX_INFLIGHT_BODY_SHARE: int(1, 100).default(50),
};

/** Settings that are only valid together (each problem names the variable to change; see rules.ts). */
function checkListenerSettings(config: ListenerSettings, ctx: z.RefinementCtx): void {
  for (const problem of listenerProblems(config)) {
    const colon = problem.indexOf(': ');
    ctx.addIssue({ code: 'custom', path: [problem.slice(0, colon)], message: problem.slice(colon + 2) });
  }
}

/** Every setting, with its default. The settings table of docs/settings.md lists the same. */
export const configSchema = z.object({
  PORT: int(0, 65535).default(8080),
  HOST: z.string().min(1).default('0.0.0.0'),
  // Any length (contract §1); a short one is warned about at start, a well-known placeholder refused (rules.ts).
  ADMIN_TOKEN: z.string().min(1).optional(),
  TRIGGERS_FILE: optionalText,
  PUBLIC_BASE_URL: z.url().optional(),
  REDIS_URL: z.url({ protocol: /^rediss?$/, error: 'must be a redis:// or rediss:// URL' }).optional(),
  /** Redis Cluster instead of REDIS_URL (see src/redis/target.ts). */
  REDIS_CLUSTER_NODES: clusterNodes.optional(),
  REDIS_USERNAME: optionalText,
  REDIS_PASSWORD: optionalText,
  REDIS_PREFIX: z.string().min(1).max(64).default('igw:'),
  REDIS_TIMEOUT_MS: int(50, 10_000).default(300),
  // Redis over TLS (rediss:// REDIS_URL or cluster nodes) and secrets at rest in Redis
  REDIS_TLS_CA_FILE: readableFile.optional(),
  REDIS_TLS_CERT_FILE: readableFile.optional(),
  REDIS_TLS_KEY_FILE: readableFile.optional(),
  SECRETS_KEY: secretsKey.optional(),
  SECRETS_KEY_PREVIOUS: secretsKey.optional(),
  REGISTRY_CACHE_MAX_ENTRIES: int(100, 10_000_000).default(100_000),
  REGISTRY_NEGATIVE_CACHE_MAX_ENTRIES: int(100, 10_000_000).default(10_000),
  IDEMPOTENCY_ON_STORE_ERROR: z.enum(['accept', 'refuse']).default('accept'),
  KEY_FETCH: z.enum(['on', 'off']).default('on'),
  IDEMPOTENCY_MEMORY_MAX_KEYS: int(1000, 10_000_000).default(100_000),
  IDEMPOTENCY_MEMORY_MAX_BYTES: int(1_048_576, 17_179_869_184).default(67_108_864),
  DELIVERY_LOG_MAX: int(0, 10_000).default(100),
  KAFKA_BROKERS: brokers.optional(),
  KAFKA_CLIENT_ID: z.string().min(1).default('ingress-gateway'),
  KAFKA_IDEMPOTENT: bool.default(true),
  KAFKA_COMPRESSION: z.enum(['none', 'gzip']).default('none'),
  // Kafka over the network: TLS and SASL (managed Kafka services require SASL over TLS).
  KAFKA_SSL: bool.default(false),
  KAFKA_SASL_MECHANISM: z.enum(['plain', 'scram-sha-256', 'scram-sha-512']).optional(),
  KAFKA_SASL_USERNAME: optionalText,
  KAFKA_SASL_PASSWORD: optionalText,
  TOPIC_TRIGGERS: topic.default('workflow.triggers'),
  TOPIC_CHAT: topic.default('chat.inbound'),
  EVENTS_DIR: z.string().min(1).default('./data/events'),
  PUBLISH_TIMEOUT_MS: int(1, 120_000).default(5000),
  PUBLISH_QUEUE_MAX: int(1, 1_000_000).default(10_000),
  BATCH_MAX_RECORDS: int(1, 10_000).default(500),
  BATCH_MAX_BYTES: int(1024, 64 * 1024 * 1024).default(4 * 1024 * 1024),
  BATCH_LINGER_MS: int(0, 1000).default(0),
  RATE_LIMIT_DEFAULT: rateSpec.default(() => ({ limit: 600, windowSeconds: 60 })),
  RATE_LIMIT_WORKSPACE: rateSpec.default(() => ({ limit: 6000, windowSeconds: 60 })),
  MAX_BODY_BYTES: int(1024, 64 * 1024 * 1024).default(1_000_000),
  // Up to 5 GiB with a file store (S3_BUCKET); without one, at most 64 MiB (src/files/settings.ts).
  MAX_FILE_BYTES: int(1, 5 * 1024 * 1024 * 1024).default(512 * 1024),
  MAX_FILES: int(0, 1000).default(10),
  MAX_FIELDS: int(1, 10_000).default(200),
  MAX_RECORD_BYTES: int(1024, 64 * 1024 * 1024).default(1_000_000),
  WHATSAPP_MAX_BODY_BYTES: int(1024, 64 * 1024 * 1024).default(3 * 1024 * 1024),
  MAX_INFLIGHT_BODY_BYTES: int(1024, 4 * 1024 * 1024 * 1024).default(32 * 1024 * 1024),
  // Files by reference (contract §12): credentials come from the AWS SDK's default chain only.
  S3_BUCKET: z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'an S3 bucket name: 3-63 of a-z 0-9 . -').optional(),
  S3_PREFIX: z.string().max(512).regex(/^[A-Za-z0-9!_.*'()/-]*\/$/, 'safe key characters ending with /, e.g. uploads/').optional(),
  S3_REGION: z.string().regex(/^[a-z0-9-]{2,32}$/, 'a region name, e.g. eu-west-1').optional(),
  S3_ENDPOINT: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
  S3_FORCE_PATH_STYLE: bool.default(false),
  INLINE_FILE_MAX_BYTES: int(0, 64 * 1024 * 1024).default(64 * 1024),
  SHUTDOWN_GRACE_MS: int(0, 600_000).default(25_000),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
  OTEL_SERVICE_NAME: z.string().min(1).max(256).default('ingress-gateway'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  ...httpSettings,
}).superRefine(checkListenerSettings);

export type Config = Readonly<z.infer<typeof configSchema>>;
