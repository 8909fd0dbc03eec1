/**
 * The rules that relate several settings, each valid alone (the OpenTelemetry Collector's
 * `Validate()`): one function per rule, each problem a line `SETTING: what is wrong`, naming
 * the variable to change. The schema (schema.ts) checks each setting on its own; loadConfig
 * runs these rules once it parsed. test/unit/config-rules.test.ts holds a fixture per rule.
 */
import { fileStoreProblems } from '../files/settings';
import { longestDrainMs, minPublishTimeoutForKafkaMs, writeTimeoutMs } from '../publish/timing';
import type { Config } from './schema';

/** A rule: the problems it finds in a parsed config (none when the settings fit together). */
export type Rule<C = Config> = (config: C) => string[];

export interface ListenerSettings {
  PORT: number;
  ADMIN_PORT: number;
  HEADERS_TIMEOUT_MS: number;
  REQUEST_TIMEOUT_MS: number;
  SHUTDOWN_GRACE_MS: number;
}

/**
 * The listeners' timeouts and ports. Checked while the schema parses (its superRefine), so
 * that a config failing these is refused with these problems alone.
 */
export const listenerProblems: Rule<ListenerSettings> = (config) => {
  const problems: string[] = [];
  if (config.HEADERS_TIMEOUT_MS >= config.REQUEST_TIMEOUT_MS) {
    problems.push(`HEADERS_TIMEOUT_MS: must be below REQUEST_TIMEOUT_MS (${config.REQUEST_TIMEOUT_MS})`);
  }
  if (config.REQUEST_TIMEOUT_MS >= config.SHUTDOWN_GRACE_MS) {
    problems.push(
      `REQUEST_TIMEOUT_MS: must be below SHUTDOWN_GRACE_MS (${config.SHUTDOWN_GRACE_MS}): a request still arriving at SIGTERM would outlast the drain`,
    );
  }
  if (config.ADMIN_PORT !== 0 && config.ADMIN_PORT === config.PORT) problems.push('ADMIN_PORT: must differ from PORT');
  return problems;
};

/** One Redis (REDIS_URL) or one cluster (REDIS_CLUSTER_NODES), each with its own way to carry a password. */
export const redisTargetProblems: Rule = (config) => {
  const problems: string[] = [];
  if (config.REDIS_URL && config.REDIS_CLUSTER_NODES) {
    problems.push('REDIS_CLUSTER_NODES: set either REDIS_URL (one Redis) or REDIS_CLUSTER_NODES (a Redis Cluster), not both');
  }
  for (const name of ['REDIS_PASSWORD', 'REDIS_USERNAME'] as const) {
    if (config[name] && !config.REDIS_CLUSTER_NODES) {
      problems.push(`${name}: only used with REDIS_CLUSTER_NODES; with REDIS_URL the credentials go in the URL (redis://user:password@host:port/0)`);
    }
  }
  // Keys carry their own hash tags (`{registry}`); a brace in the prefix would move the tag.
  if (config.REDIS_CLUSTER_NODES && /[{}]/.test(config.REDIS_PREFIX)) {
    problems.push('REDIS_PREFIX: must not contain { or } with REDIS_CLUSTER_NODES (the gateway places the hash tags in its keys itself)');
  }
  return problems;
};

/** The TLS files only mean something with a rediss:// target, and a client certificate needs its key. */
export const redisTlsProblems: Rule = (config) => {
  const problems: string[] = [];
  const tlsTarget = config.REDIS_URL?.startsWith('rediss://') || config.REDIS_CLUSTER_NODES?.[0]?.startsWith('rediss://');
  for (const name of ['REDIS_TLS_CA_FILE', 'REDIS_TLS_CERT_FILE', 'REDIS_TLS_KEY_FILE'] as const) {
    if (config[name] && !tlsTarget) {
      problems.push(`${name}: needs a rediss:// REDIS_URL or rediss:// REDIS_CLUSTER_NODES (TLS); without TLS it would be ignored`);
    }
  }
  if (Boolean(config.REDIS_TLS_CERT_FILE) !== Boolean(config.REDIS_TLS_KEY_FILE)) {
    problems.push('REDIS_TLS_CERT_FILE: a client certificate needs both REDIS_TLS_CERT_FILE and REDIS_TLS_KEY_FILE');
  }
  return problems;
};

/** SECRETS_KEY_PREVIOUS is the old key of a rotation: it needs a new, different SECRETS_KEY. */
export const secretsKeyProblems: Rule = (config) => {
  const problems: string[] = [];
  if (config.SECRETS_KEY_PREVIOUS && !config.SECRETS_KEY) {
    problems.push('SECRETS_KEY_PREVIOUS: only opens values during a rotation; set SECRETS_KEY to the new key');
  }
  if (config.SECRETS_KEY_PREVIOUS && config.SECRETS_KEY_PREVIOUS === config.SECRETS_KEY) {
    problems.push('SECRETS_KEY_PREVIOUS: is the same key as SECRETS_KEY');
  }
  return problems;
};

/** The publish deadline must leave kafkajs its attempts (src/publish/timing.ts). */
export const kafkaDeadlineProblems: Rule = (config) => {
  const deadline = config.PUBLISH_TIMEOUT_MS;
  const kafkaMinimum = minPublishTimeoutForKafkaMs();
  if (!config.KAFKA_BROKERS || deadline >= kafkaMinimum) return [];
  return [
    `PUBLISH_TIMEOUT_MS: ${deadline} is too short for Kafka: kafkajs' 2 attempts (1 retry) of at least 200 ms each, ` +
      `and their backoff, must end within 80% of it; use at least ${kafkaMinimum}`,
  ];
};

/** The grace must outlast the longest drain. */
export const drainProblems: Rule = (config) => {
  const deadline = config.PUBLISH_TIMEOUT_MS;
  const drain = longestDrainMs(deadline);
  if (config.SHUTDOWN_GRACE_MS >= drain) return [];
  return [
    `SHUTDOWN_GRACE_MS: ${config.SHUTDOWN_GRACE_MS} is shorter than the longest drain, ${drain} ms ` +
      `(PUBLISH_TIMEOUT_MS ${deadline} + the sink's write timeout ${writeTimeoutMs(deadline)} + 2000 to close): ` +
      'raise it or lower PUBLISH_TIMEOUT_MS',
  ];
};

/** A body the gateway accepts must be able to fit in a record, or go by reference to a file store (contract §12). */
export const bodyFitsRecordProblems: Rule = (config) => {
  if (config.MAX_BODY_BYTES <= config.MAX_RECORD_BYTES || config.S3_BUCKET) return [];
  return [
    `MAX_BODY_BYTES: ${config.MAX_BODY_BYTES} is over MAX_RECORD_BYTES (${config.MAX_RECORD_BYTES}): ` +
      'a body that large could never be published without a file store (S3_BUCKET)',
  ];
};

/** SASL needs all three of its settings. */
export const kafkaSaslProblems: Rule = (config) => {
  const sasl = [config.KAFKA_SASL_MECHANISM, config.KAFKA_SASL_USERNAME, config.KAFKA_SASL_PASSWORD];
  if (!sasl.some((v) => v !== undefined) || !sasl.some((v) => v === undefined)) return [];
  return ['KAFKA_SASL_MECHANISM: KAFKA_SASL_MECHANISM, KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD go together'];
};

/** Every rule checked once the schema parsed, in the order their problems are reported. */
export const crossFieldRules: readonly Rule[] = [
  redisTargetProblems,
  redisTlsProblems,
  secretsKeyProblems,
  kafkaDeadlineProblems,
  drainProblems,
  bodyFitsRecordProblems,
  kafkaSaslProblems,
  fileStoreProblems, // S3_* without S3_BUCKET, large files without a file store (src/files/settings.ts)
];

export function crossFieldProblems(config: Config): string[] {
  return crossFieldRules.flatMap((rule) => rule(config));
}
