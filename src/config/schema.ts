import { z } from 'zod';

const int = (min: number, max: number) =>
  z.coerce.number({ error: 'must be a number' }).int('must be a whole number').min(min).max(max);
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

const brokers = z
  .string()
  .transform((list) => list.split(',').map((b) => b.trim()).filter(Boolean))
  .pipe(z.array(z.string().regex(/^[^\s:,]+:[0-9]{1,5}$/, 'each broker must be host:port')).min(1));

/** Every setting, with its default. The README's settings table lists the same. */
export const configSchema = z.object({
  PORT: int(0, 65535).default(8080),
  HOST: z.string().min(1).default('0.0.0.0'),
  ADMIN_TOKEN: z.string().min(12, 'must be at least 12 characters').optional(),
  TRIGGERS_FILE: optionalText,
  PUBLIC_BASE_URL: z.url().optional(),
  REDIS_URL: z.url({ protocol: /^rediss?$/, error: 'must be a redis:// or rediss:// URL' }).optional(),
  REDIS_PREFIX: z.string().min(1).max(64).default('igw:'),
  REDIS_TIMEOUT_MS: int(50, 10_000).default(300),
  IDEMPOTENCY_ON_STORE_ERROR: z.enum(['accept', 'refuse']).default('accept'),
  KAFKA_BROKERS: brokers.optional(),
  KAFKA_CLIENT_ID: z.string().min(1).default('ingress-gateway'),
  KAFKA_IDEMPOTENT: bool.default(true),
  KAFKA_COMPRESSION: z.enum(['none', 'gzip']).default('none'),
  TOPIC_TRIGGERS: topic.default('workflow.triggers'),
  TOPIC_CHAT: topic.default('chat.inbound'),
  EVENTS_DIR: z.string().min(1).default('./data/events'),
  PUBLISH_TIMEOUT_MS: int(100, 120_000).default(5000),
  PUBLISH_QUEUE_MAX: int(1, 1_000_000).default(10_000),
  BATCH_MAX_RECORDS: int(1, 10_000).default(500),
  BATCH_MAX_BYTES: int(1024, 64 * 1024 * 1024).default(4 * 1024 * 1024),
  BATCH_LINGER_MS: int(0, 1000).default(5),
  RATE_LIMIT_DEFAULT: rateSpec.default(() => ({ limit: 600, windowSeconds: 60 })),
  RATE_LIMIT_WORKSPACE: rateSpec.default(() => ({ limit: 6000, windowSeconds: 60 })),
  MAX_BODY_BYTES: int(1024, 64 * 1024 * 1024).default(1024 * 1024),
  MAX_FILE_BYTES: int(1, 64 * 1024 * 1024).default(512 * 1024),
  MAX_FILES: int(0, 1000).default(10),
  MAX_FIELDS: int(1, 10_000).default(200),
  MAX_RECORD_BYTES: int(1024, 64 * 1024 * 1024).default(1_000_000),
  WHATSAPP_MAX_BODY_BYTES: int(1024, 64 * 1024 * 1024).default(3 * 1024 * 1024),
  MAX_INFLIGHT_BODY_BYTES: int(1024, 4 * 1024 * 1024 * 1024).default(32 * 1024 * 1024),
  SHUTDOWN_GRACE_MS: int(0, 600_000).default(25_000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type Config = Readonly<z.infer<typeof configSchema>>;
