/**
 * The rules that relate several settings (src/config/rules.ts), each with small fixtures: an
 * environment, and the exact problems loadConfig reports for it (none when the settings fit).
 */
import { loadConfig } from '../../src/config/load';
import {
  bodyFitsRecordProblems,
  crossFieldRules,
  drainProblems,
  kafkaDeadlineProblems,
  kafkaSaslProblems,
  listenerProblems,
  redisTargetProblems,
  redisTlsProblems,
  secretsKeyProblems,
  type Rule,
} from '../../src/config/rules';
import { fileStoreProblems } from '../../src/files/settings';

const readable = __filename;
const KEY_A = Buffer.from(Array.from({ length: 32 }, (_, i) => i)).toString('base64');
const KEY_B = Buffer.from(Array.from({ length: 32 }, (_, i) => 255 - i)).toString('base64');

interface Fixture {
  rule: Rule<never>;
  env: Record<string, string>;
  problems: string[];
}

const fixtures: Array<[string, Fixture]> = [
  ['headers timeout below the request timeout', { rule: listenerProblems, env: { HEADERS_TIMEOUT_MS: '15000' }, problems: ['HEADERS_TIMEOUT_MS: must be below REQUEST_TIMEOUT_MS (15000)'] }],
  ['request timeout below the grace', {
    rule: listenerProblems,
    env: { REQUEST_TIMEOUT_MS: '30000' },
    problems: ['REQUEST_TIMEOUT_MS: must be below SHUTDOWN_GRACE_MS (25000): a request still arriving at SIGTERM would outlast the drain'],
  }],
  ['admin port equal to the port', { rule: listenerProblems, env: { PORT: '9000', ADMIN_PORT: '9000' }, problems: ['ADMIN_PORT: must differ from PORT'] }],
  ['both ports 0 (any free port each)', { rule: listenerProblems, env: { PORT: '0', ADMIN_PORT: '0' }, problems: [] }],
  ['REDIS_URL and REDIS_CLUSTER_NODES', {
    rule: redisTargetProblems,
    env: { REDIS_URL: 'redis://r:6379/0', REDIS_CLUSTER_NODES: 'a:7000' },
    problems: ['REDIS_CLUSTER_NODES: set either REDIS_URL (one Redis) or REDIS_CLUSTER_NODES (a Redis Cluster), not both'],
  }],
  ['REDIS_USERNAME without a cluster', {
    rule: redisTargetProblems,
    env: { REDIS_URL: 'redis://r:6379/0', REDIS_USERNAME: 'gateway' },
    problems: ['REDIS_USERNAME: only used with REDIS_CLUSTER_NODES; with REDIS_URL the credentials go in the URL (redis://user:password@host:port/0)'],
  }],
  ['a brace in the prefix of a cluster', {
    rule: redisTargetProblems,
    env: { REDIS_CLUSTER_NODES: 'a:7000', REDIS_PREFIX: 'igw{x}:' },
    problems: ['REDIS_PREFIX: must not contain { or } with REDIS_CLUSTER_NODES (the gateway places the hash tags in its keys itself)'],
  }],
  ['a cluster with its password', { rule: redisTargetProblems, env: { REDIS_CLUSTER_NODES: 'a:7000', REDIS_PASSWORD: 'Zq8wP1xK4vR7' }, problems: [] }],
  ['a TLS file without TLS', {
    rule: redisTlsProblems,
    env: { REDIS_URL: 'redis://r:6379/0', REDIS_TLS_CA_FILE: readable },
    problems: ['REDIS_TLS_CA_FILE: needs a rediss:// REDIS_URL or rediss:// REDIS_CLUSTER_NODES (TLS); without TLS it would be ignored'],
  }],
  ['a client certificate without its key', {
    rule: redisTlsProblems,
    env: { REDIS_URL: 'rediss://r:6380/0', REDIS_TLS_CERT_FILE: readable },
    problems: ['REDIS_TLS_CERT_FILE: a client certificate needs both REDIS_TLS_CERT_FILE and REDIS_TLS_KEY_FILE'],
  }],
  ['a CA file with TLS', { rule: redisTlsProblems, env: { REDIS_URL: 'rediss://r:6380/0', REDIS_TLS_CA_FILE: readable }, problems: [] }],
  ['a previous key alone', {
    rule: secretsKeyProblems,
    env: { SECRETS_KEY_PREVIOUS: KEY_B },
    problems: ['SECRETS_KEY_PREVIOUS: only opens values during a rotation; set SECRETS_KEY to the new key'],
  }],
  ['the same key twice', { rule: secretsKeyProblems, env: { SECRETS_KEY: KEY_A, SECRETS_KEY_PREVIOUS: KEY_A }, problems: ['SECRETS_KEY_PREVIOUS: is the same key as SECRETS_KEY'] }],
  ['a rotation', { rule: secretsKeyProblems, env: { SECRETS_KEY: KEY_A, SECRETS_KEY_PREVIOUS: KEY_B }, problems: [] }],
  ['a publish deadline too short for Kafka', {
    rule: kafkaDeadlineProblems,
    env: { KAFKA_BROKERS: 'k:9092', PUBLISH_TIMEOUT_MS: '600' },
    problems: [
      "PUBLISH_TIMEOUT_MS: 600 is too short for Kafka: kafkajs' 2 attempts (1 retry) of at least 200 ms each, and their backoff, must end within 80% of it; use at least 650",
    ],
  }],
  ['the same deadline with the file sink', { rule: kafkaDeadlineProblems, env: { PUBLISH_TIMEOUT_MS: '600' }, problems: [] }],
  ['a grace shorter than the longest drain', {
    rule: drainProblems,
    env: { SHUTDOWN_GRACE_MS: '14000', REQUEST_TIMEOUT_MS: '10000', HEADERS_TIMEOUT_MS: '5000' },
    problems: [
      "SHUTDOWN_GRACE_MS: 14000 is shorter than the longest drain, 14500 ms (PUBLISH_TIMEOUT_MS 5000 + the sink's write timeout 7500 + 2000 to close): raise it or lower PUBLISH_TIMEOUT_MS",
    ],
  }],
  ['a grace equal to the longest drain', { rule: drainProblems, env: { SHUTDOWN_GRACE_MS: '14500', REQUEST_TIMEOUT_MS: '10000', HEADERS_TIMEOUT_MS: '5000' }, problems: [] }],
  ['a body larger than a record', {
    rule: bodyFitsRecordProblems,
    env: { MAX_BODY_BYTES: '2000000' },
    problems: ['MAX_BODY_BYTES: 2000000 is over MAX_RECORD_BYTES (1000000): a body that large could never be published without a file store (S3_BUCKET)'],
  }],
  ['a body larger than a record, with a file store to take it by reference', { rule: bodyFitsRecordProblems, env: { MAX_BODY_BYTES: '2000000', S3_BUCKET: 'igw-bodies' }, problems: [] }],
  ['a body as large as a record', { rule: bodyFitsRecordProblems, env: { MAX_BODY_BYTES: '2000000', MAX_RECORD_BYTES: '2000000' }, problems: [] }],
  ['SASL without its password', {
    rule: kafkaSaslProblems,
    env: { KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_USERNAME: 'gateway' },
    problems: ['KAFKA_SASL_MECHANISM: KAFKA_SASL_MECHANISM, KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD go together'],
  }],
  ['SASL complete', { rule: kafkaSaslProblems, env: { KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_USERNAME: 'gateway', KAFKA_SASL_PASSWORD: 'sasl-secret-9f2' }, problems: [] }],
  ['an S3 setting without a bucket', { rule: fileStoreProblems, env: { S3_REGION: 'eu-west-1' }, problems: ['S3_REGION: has no effect without S3_BUCKET'] }],
  ['S3 settings with a bucket', { rule: fileStoreProblems, env: { S3_BUCKET: 'uploads', S3_REGION: 'eu-west-1' }, problems: [] }],
];

test.each(fixtures)('%s', (_name, { env, problems }) => {
  const result = loadConfig(env);
  expect(result.ok ? [] : result.problems).toEqual(problems);
});

test('every rule has a fixture it refuses and one it accepts', () => {
  const rules: Array<Rule<never>> = [listenerProblems, ...crossFieldRules];
  for (const rule of rules) {
    const own = fixtures.map(([, f]) => f).filter((f) => f.rule === rule);
    expect({ rule: rule.name, refused: own.some((f) => f.problems.length > 0) }).toEqual({ rule: rule.name, refused: true });
    expect({ rule: rule.name, accepted: own.some((f) => f.problems.length === 0) }).toEqual({ rule: rule.name, accepted: true });
  }
});

test('problems of several rules are all reported, in the order of the rules', () => {
  const result = loadConfig({ REDIS_USERNAME: 'gateway', MAX_BODY_BYTES: '2000000', S3_REGION: 'eu-west-1' });
  expect(result.ok ? [] : result.problems.map((line) => line.slice(0, line.indexOf(':')))).toEqual(['REDIS_USERNAME', 'MAX_BODY_BYTES', 'S3_REGION']);
});
