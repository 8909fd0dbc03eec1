import { longestDrainMs, minPublishTimeoutForKafkaMs, writeTimeoutMs } from '../publish/timing';
import { configSchema, type Config } from './schema';
import { fileStoreProblems } from '../files/settings';
import { placeholderProblems } from './redact';

export { redactConfig } from './redact';

export type ConfigResult = { ok: true; config: Config } | { ok: false; problems: string[] };

/** Parses the environment once. Empty strings count as unset. */
export function loadConfig(env: NodeJS.ProcessEnv): ConfigResult {
  const input: Record<string, string> = {};
  for (const key of Object.keys(configSchema.shape)) {
    const value = env[key];
    if (value !== undefined && value !== '') input[key] = value;
  }
  const parsed = configSchema.safeParse(input);
  if (!parsed.success) {
    return {
      ok: false,
      problems: parsed.error.issues.map((issue) => `${issue.path.join('.') || 'config'}: ${issue.message}`),
    };
  }
  const problems = [
    ...placeholderProblems(parsed.data),
    ...settingsThatNeedEachOther(parsed.data),
    ...publishSettingsThatDoNotFit(parsed.data),
    ...fileStoreProblems(parsed.data),
  ];
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, config: Object.freeze(parsed.data) };
}

function settingsThatNeedEachOther(config: Config): string[] {
  const problems: string[] = [...redisTargetProblems(config)];
  const tlsTarget = config.REDIS_URL?.startsWith('rediss://') || config.REDIS_CLUSTER_NODES?.[0]?.startsWith('rediss://');
  const tls = ['REDIS_TLS_CA_FILE', 'REDIS_TLS_CERT_FILE', 'REDIS_TLS_KEY_FILE'] as const;
  for (const name of tls) {
    if (config[name] && !tlsTarget) {
      problems.push(`${name}: needs a rediss:// REDIS_URL or rediss:// REDIS_CLUSTER_NODES (TLS); without TLS it would be ignored`);
    }
  }
  if (Boolean(config.REDIS_TLS_CERT_FILE) !== Boolean(config.REDIS_TLS_KEY_FILE)) {
    problems.push('REDIS_TLS_CERT_FILE: a client certificate needs both REDIS_TLS_CERT_FILE and REDIS_TLS_KEY_FILE');
  }
  if (config.SECRETS_KEY_PREVIOUS && !config.SECRETS_KEY) {
    problems.push('SECRETS_KEY_PREVIOUS: only opens values during a rotation; set SECRETS_KEY to the new key');
  }
  if (config.SECRETS_KEY_PREVIOUS && config.SECRETS_KEY_PREVIOUS === config.SECRETS_KEY) {
    problems.push('SECRETS_KEY_PREVIOUS: is the same key as SECRETS_KEY');
  }
  return problems;
}

/** One Redis (REDIS_URL) or one cluster (REDIS_CLUSTER_NODES), each with its own way to carry a password. */
function redisTargetProblems(config: Config): string[] {
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
}

/**
 * Publish settings that are each valid but do not fit together. The publish deadline must
 * leave kafkajs its attempts (src/publish/timing.ts), the grace must outlast the longest
 * drain, a body the gateway accepts must be able to fit in a record, and SASL needs all three
 * of its settings.
 */
export function publishSettingsThatDoNotFit(config: Config): string[] {
  const problems: string[] = [];
  const deadline = config.PUBLISH_TIMEOUT_MS;
  const kafkaMinimum = minPublishTimeoutForKafkaMs();
  if (config.KAFKA_BROKERS && deadline < kafkaMinimum) {
    problems.push(
      `PUBLISH_TIMEOUT_MS: ${deadline} is too short for Kafka: kafkajs' 2 attempts (1 retry) of at least 200 ms each, ` +
        `and their backoff, must end within 80% of it; use at least ${kafkaMinimum}`,
    );
  }
  const drain = longestDrainMs(deadline);
  if (config.SHUTDOWN_GRACE_MS < drain) {
    problems.push(
      `SHUTDOWN_GRACE_MS: ${config.SHUTDOWN_GRACE_MS} is shorter than the longest drain, ${drain} ms ` +
        `(PUBLISH_TIMEOUT_MS ${deadline} + the sink's write timeout ${writeTimeoutMs(deadline)} + 2000 to close): ` +
        'raise it or lower PUBLISH_TIMEOUT_MS',
    );
  }
  // With a file store, a body whose event is over the record limit goes by reference (contract §12).
  if (config.MAX_BODY_BYTES > config.MAX_RECORD_BYTES && !config.S3_BUCKET) {
    problems.push(
      `MAX_BODY_BYTES: ${config.MAX_BODY_BYTES} is over MAX_RECORD_BYTES (${config.MAX_RECORD_BYTES}): ` +
        'a body that large could never be published without a file store (S3_BUCKET)',
    );
  }
  const sasl = [config.KAFKA_SASL_MECHANISM, config.KAFKA_SASL_USERNAME, config.KAFKA_SASL_PASSWORD];
  if (sasl.some((v) => v !== undefined) && sasl.some((v) => v === undefined)) {
    problems.push('KAFKA_SASL_MECHANISM: KAFKA_SASL_MECHANISM, KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD go together');
  }
  return problems;
}
