import { loadConfig, redactConfig } from '../../src/config/load';
import { redisTarget } from '../../src/redis/target';

const KEY_A = Buffer.from(Array.from({ length: 32 }, (_, i) => i)).toString('base64');
const KEY_B = Buffer.from(Array.from({ length: 32 }, (_, i) => 255 - i)).toString('base64');

function ok(env: NodeJS.ProcessEnv) {
  const result = loadConfig(env);
  if (!result.ok) throw new Error(`expected a valid config, got: ${result.problems.join('; ')}`);
  return result.config;
}

function problems(env: NodeJS.ProcessEnv): string[] {
  const result = loadConfig(env);
  if (result.ok) throw new Error('expected problems');
  return result.problems;
}

describe('loadConfig', () => {
  it('has the contract\'s defaults with nothing set', () => {
    const config = ok({});
    expect(config).toMatchObject({
      PORT: 8080,
      REDIS_PREFIX: 'igw:',
      KAFKA_IDEMPOTENT: true,
      TOPIC_TRIGGERS: 'workflow.triggers',
      TOPIC_CHAT: 'chat.inbound',
      EVENTS_DIR: './data/events',
      PUBLISH_TIMEOUT_MS: 5000,
      RATE_LIMIT_DEFAULT: { limit: 600, windowSeconds: 60 },
      RATE_LIMIT_WORKSPACE: { limit: 6000, windowSeconds: 60 },
      AUTH_FAILURE_LIMIT: { limit: 100, windowSeconds: 60 },
    });
    for (const unset of ['ADMIN_TOKEN', 'TRIGGERS_FILE', 'REDIS_URL', 'KAFKA_BROKERS']) expect(config[unset as keyof typeof config]).toBeUndefined();
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('reads and converts values', () => {
    const config = ok({
      PORT: '0',
      ADMIN_TOKEN: 'a-long-admin-token',
      REDIS_URL: 'redis://127.0.0.1:6379/2',
      KAFKA_BROKERS: 'k1:9092, k2:9093,',
      KAFKA_IDEMPOTENT: 'false',
      RATE_LIMIT_DEFAULT: '10/1',
      RATE_LIMIT_WORKSPACE: '1000000/86400',
      PUBLISH_TIMEOUT_MS: '2500',
    });
    expect(config).toMatchObject({
      PORT: 0,
      KAFKA_BROKERS: ['k1:9092', 'k2:9093'],
      KAFKA_IDEMPOTENT: false,
      RATE_LIMIT_DEFAULT: { limit: 10, windowSeconds: 1 },
      RATE_LIMIT_WORKSPACE: { limit: 1000000, windowSeconds: 86400 },
      PUBLISH_TIMEOUT_MS: 2500,
    });
  });

  it('treats empty strings as unset and ignores variables it does not know', () => {
    const config = ok({ PORT: '', ADMIN_TOKEN: '', REDIS_URL: '', HOME: '/root', SOMETHING_ELSE: 'x' });
    expect(config.PORT).toBe(8080);
    expect(config.ADMIN_TOKEN).toBeUndefined();
    expect(config.REDIS_URL).toBeUndefined();
    expect(config).not.toHaveProperty('HOME');
  });

  it('raises an unset SHUTDOWN_GRACE_MS to the longest drain, so a longer PUBLISH_TIMEOUT_MS alone still starts; a grace set too short is refused', () => {
    expect(ok({ PUBLISH_TIMEOUT_MS: '10000' }).SHUTDOWN_GRACE_MS).toBe(10_000 + 15_000 + 2_000);
    expect(ok({ PUBLISH_TIMEOUT_MS: '50' }).SHUTDOWN_GRACE_MS).toBe(25_000);
    expect(problems({ PUBLISH_TIMEOUT_MS: '10000', SHUTDOWN_GRACE_MS: '25000' }).some((line) => line.startsWith('SHUTDOWN_GRACE_MS'))).toBe(true);
  });

  it('says a number out of range is out of range, not that it is no number', () => {
    const [line] = problems({ PUBLISH_TIMEOUT_MS: '0' });
    expect(line).toMatch(/^PUBLISH_TIMEOUT_MS: /);
    expect(line).not.toContain('must be a number');
    expect(problems({ PUBLISH_TIMEOUT_MS: 'soon' })).toEqual(['PUBLISH_TIMEOUT_MS: must be a number']);
  });

  it('takes an admin token of any length (contract §1 sets none; a short one is warned about at start)', () => {
    expect(ok({ ADMIN_TOKEN: 'tok' }).ADMIN_TOKEN).toBe('tok');
  });

  it('returns one line per problem, each naming its variable', () => {
    const lines = problems({
      PORT: '70000',
      REDIS_URL: 'http://x',
      KAFKA_BROKERS: 'nohost',
      KAFKA_IDEMPOTENT: 'maybe',
      RATE_LIMIT_DEFAULT: '600 per minute',
      RATE_LIMIT_WORKSPACE: '0/60',
      PUBLISH_TIMEOUT_MS: 'soon',
      TOPIC_TRIGGERS: 'bad topic',
    });
    const names = ['PORT', 'REDIS_URL', 'KAFKA_BROKERS', 'KAFKA_IDEMPOTENT', 'RATE_LIMIT_DEFAULT', 'RATE_LIMIT_WORKSPACE', 'PUBLISH_TIMEOUT_MS', 'TOPIC_TRIGGERS'];
    for (const name of names) expect(lines.filter((line) => line.startsWith(`${name}`)).length).toBeGreaterThanOrEqual(1);
    for (const line of lines) expect(line).not.toContain('\n');
    expect(lines.find((l) => l.startsWith('RATE_LIMIT_DEFAULT'))).toContain('<requests>/<seconds>');
  });

  it.each([['PORT', '-1'], ['PORT', '80.5'], ['PUBLISH_TIMEOUT_MS', '0'], ['RATE_LIMIT_DEFAULT', '60'], ['RATE_LIMIT_DEFAULT', '5/0'], ['LOG_LEVEL', 'loud']])(
    '%s=%s is refused',
    (name, value) => {
      expect(problems({ [name]: value }).some((line) => line.startsWith(name))).toBe(true);
    },
  );
});

describe('settings that do not fit together (exit 2 at start)', () => {
  it('the defaults fit: a body of MAX_BODY_BYTES can be a record, the grace outlasts the longest drain', () => {
    const config = ok({ KAFKA_BROKERS: 'k:9092' });
    expect(config.MAX_BODY_BYTES).toBeLessThanOrEqual(config.MAX_RECORD_BYTES);
    expect(config.MAX_BODY_BYTES).toBe(1_000_000);
  });

  it('a publish deadline too short for kafkajs\' attempts is refused, naming PUBLISH_TIMEOUT_MS, only with Kafka', () => {
    const lines = problems({ KAFKA_BROKERS: 'k:9092', PUBLISH_TIMEOUT_MS: '600' });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^PUBLISH_TIMEOUT_MS: 600 is too short for Kafka.*at least 650$/);
    expect(ok({ KAFKA_BROKERS: 'k:9092', PUBLISH_TIMEOUT_MS: '650' }).PUBLISH_TIMEOUT_MS).toBe(650);
    expect(ok({ PUBLISH_TIMEOUT_MS: '600' }).PUBLISH_TIMEOUT_MS).toBe(600); // the file sink has no retries
  });

  it.each([
    ['5000', '10000'], // the old write timeout alone (30 s) was above the default 25 s grace
    ['5000', '14499'],
    ['20000', '25000'],
    ['1500', '3000'],
  ])('PUBLISH_TIMEOUT_MS=%s with SHUTDOWN_GRACE_MS=%s: a drain during a stall would outlast the grace', (deadline, grace) => {
    // The request timeouts must stay below the grace too; that is another problem, checked apart.
    const lines = problems({ PUBLISH_TIMEOUT_MS: deadline, SHUTDOWN_GRACE_MS: grace, ...timeoutsBelow(Number(grace)) });
    expect(lines.filter((line) => !/^(REQUEST|HEADERS)_TIMEOUT_MS: /.test(line))).toEqual([
      expect.stringMatching(/^SHUTDOWN_GRACE_MS: .*longest drain/),
    ]);
  });

  it('the grace just long enough for the longest drain is accepted', () => {
    expect(ok({ PUBLISH_TIMEOUT_MS: '5000', SHUTDOWN_GRACE_MS: '14500', ...timeoutsBelow(14500) }).SHUTDOWN_GRACE_MS).toBe(14500);
  });

  it('MAX_BODY_BYTES over MAX_RECORD_BYTES is refused: such a body could never be published', () => {
    const lines = problems({ MAX_BODY_BYTES: '2000000' });
    expect(lines).toEqual([expect.stringMatching(/^MAX_BODY_BYTES: 2000000 is over MAX_RECORD_BYTES \(1000000\)/)]);
    expect(ok({ MAX_BODY_BYTES: '2000000', MAX_RECORD_BYTES: '2000000' }).MAX_BODY_BYTES).toBe(2000000);
  });

  it('MAX_BODY_BYTES over MAX_RECORD_BYTES is accepted with a file store: large bodies go by reference (issue 22, item 3)', () => {
    expect(ok({ MAX_BODY_BYTES: String(25 * 1024 * 1024), S3_BUCKET: 'igw-bodies' }).MAX_BODY_BYTES).toBe(25 * 1024 * 1024);
  });
});

describe('Kafka TLS and SASL settings', () => {
  it.each(['plain', 'scram-sha-256', 'scram-sha-512'])('KAFKA_SASL_MECHANISM=%s with a user and password, over TLS', (mechanism) => {
    const config = ok({
      KAFKA_BROKERS: 'k:9093',
      KAFKA_SSL: 'true',
      KAFKA_SASL_MECHANISM: mechanism,
      KAFKA_SASL_USERNAME: 'gateway',
      KAFKA_SASL_PASSWORD: 'sasl-secret-9f2',
    });
    expect(config).toMatchObject({
      KAFKA_SSL: true,
      KAFKA_SASL_MECHANISM: mechanism,
      KAFKA_SASL_USERNAME: 'gateway',
      KAFKA_SASL_PASSWORD: 'sasl-secret-9f2',
    });
  });

  it('TLS and SASL are off by default', () => {
    const config = ok({});
    expect(config.KAFKA_SSL).toBe(false);
    expect(config.KAFKA_SASL_MECHANISM).toBeUndefined();
  });

  it('refuses an unknown mechanism, and a mechanism without its user or password', () => {
    expect(problems({ KAFKA_SASL_MECHANISM: 'gssapi' })[0]).toMatch(/^KAFKA_SASL_MECHANISM/);
    const lines = problems({ KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_USERNAME: 'gateway' });
    expect(lines).toEqual([expect.stringMatching(/^KAFKA_SASL_MECHANISM: .*go together/)]);
    expect(problems({ KAFKA_SASL_PASSWORD: 'x' })[0]).toMatch(/go together/);
  });
});

describe('redactConfig', () => {
  it('hides the Kafka SASL password', () => {
    const config = ok({ KAFKA_SASL_MECHANISM: 'scram-sha-512', KAFKA_SASL_USERNAME: 'gateway', KAFKA_SASL_PASSWORD: 'sasl-secret-9f2' });
    const redacted = redactConfig(config);
    expect(redacted.KAFKA_SASL_PASSWORD).toBe('[set]');
    expect(JSON.stringify(redacted)).not.toContain('sasl-secret-9f2');
    expect(redacted.KAFKA_SASL_USERNAME).toBe('gateway');
  });

  it('hides the admin token and credentials in REDIS_URL', () => {
    const config = ok({ ADMIN_TOKEN: 'a-long-admin-token', REDIS_URL: 'redis://user:pa55word@redis.internal:6379/0' });
    const redacted = redactConfig(config);
    const text = JSON.stringify(redacted);
    expect(redacted.ADMIN_TOKEN).toBe('[set]');
    expect(text).not.toContain('a-long-admin-token');
    expect(text).not.toContain('pa55word');
    expect(text).not.toContain('user:');
    expect(String(redacted.REDIS_URL)).toContain('redis.internal:6379');
  });

  it('hides a password given as a query parameter of REDIS_URL (?password=)', () => {
    const config = ok({ REDIS_URL: 'redis://127.0.0.1:6379/0?password=S3cret&family=4' });
    const text = JSON.stringify(redactConfig(config));
    expect(text).not.toContain('S3cret');
    expect(text).toContain('family=4');
  });

  it('hides credentials in every URL setting, not only REDIS_URL', () => {
    const config = ok({ PUBLIC_BASE_URL: 'https://hook-user:hook-pass@hooks.example.net/base?token=t0ken-value&x=1#access_token=frag-value' });
    const redacted = String(redactConfig(config).PUBLIC_BASE_URL);
    for (const secret of ['hook-user', 'hook-pass', 't0ken-value', 'frag-value']) expect(redacted).not.toContain(secret);
    expect(redacted).toContain('hooks.example.net/base');
    expect(redacted).toContain('x=1');
  });

  it('is driven by names and values: a setting added later is covered without a list', () => {
    const redacted = redactConfig({
      KAFKA_SASL_PASSWORD: 'kafka-pw-value',
      S3_SECRET_ACCESS_KEY: 's3-secret-value',
      SOME_WEBHOOK_SIGNING_KEY: 'signing-value',
      UPSTREAM_URL: 'amqp://u:amqp-pw@mq:5672/?auth=query-auth',
      BROKER_URLS: ['https://a:list-pw@one.example', 'https://two.example'],
      REDIS_TLS_KEY_FILE: '/etc/tls/client.key',
      PORT: 8080,
    });
    const text = JSON.stringify(redacted);
    for (const secret of ['kafka-pw-value', 's3-secret-value', 'signing-value', 'amqp-pw', 'query-auth', 'list-pw']) expect(text).not.toContain(secret);
    expect(redacted.KAFKA_SASL_PASSWORD).toBe('[set]');
    expect(redacted.REDIS_TLS_KEY_FILE).toBe('/etc/tls/client.key');
    expect(redacted.PORT).toBe(8080);
    expect((redacted.BROKER_URLS as string[])[1]).toBe('https://two.example');
  });

  it('hides SECRETS_KEY and SECRETS_KEY_PREVIOUS', () => {
    const config = ok({ SECRETS_KEY: KEY_A, SECRETS_KEY_PREVIOUS: KEY_B });
    const text = JSON.stringify(redactConfig(config));
    expect(text).not.toContain(KEY_A);
    expect(text).not.toContain(KEY_B);
  });

  it('leaves a config without secrets as it is', () => {
    const config = ok({});
    expect(redactConfig(config)).toEqual({ ...config });
  });
});

describe('well-known placeholders (issue 9 item 12)', () => {
  it.each([
    ['ADMIN_TOKEN', 'REPLACE-ME-with-a-long-random-token'],
    ['ADMIN_TOKEN', 'change-me-please-now'],
    ['ADMIN_TOKEN', 'CHANGEME_CHANGEME'],
    ['ADMIN_TOKEN', '<your-token-here>'],
    ['ADMIN_TOKEN', 'token.example.value'],
    ['ADMIN_TOKEN', 'xxxxxxxxxxxxxxxx'],
    ['ADMIN_TOKEN', 'password____'],
    ['REDIS_URL', 'redis://:changeme@redis:6379/0'],
    ['REDIS_URL', 'redis://redis:6379/0?password=secret'],
  ])('%s=%s is refused with a line naming the setting', (name, value) => {
    const lines = problems({ [name]: value });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^${name}: .*placeholder`));
  });

  it('never prints the refused value (it may be a real secret that merely contains "example")', () => {
    const lines = problems({ ADMIN_TOKEN: 'my-example-9f8e7d6c5b4a' });
    expect(lines.join('\n')).not.toContain('9f8e7d6c5b4a');
  });

  it('accepts random values', () => {
    expect(ok({ ADMIN_TOKEN: 'f3a9c1d7e5b2a8c4d6e0f1a2', REDIS_URL: 'redis://:Zq8wP1xK4vR7@redis:6379/0' }).ADMIN_TOKEN).toBe('f3a9c1d7e5b2a8c4d6e0f1a2');
  });
});

describe('secrets and Redis TLS settings', () => {
  it('SECRETS_KEY must be 32 bytes of base64', () => {
    expect(ok({ SECRETS_KEY: KEY_A }).SECRETS_KEY).toBe(KEY_A);
    for (const bad of ['short', Buffer.alloc(16, 1).toString('base64'), Buffer.alloc(32, 7).toString('base64')]) {
      expect(problems({ SECRETS_KEY: bad }).some((line) => line.startsWith('SECRETS_KEY:'))).toBe(true);
    }
  });

  it('SECRETS_KEY_PREVIOUS needs SECRETS_KEY, and a different one', () => {
    expect(problems({ SECRETS_KEY_PREVIOUS: KEY_B })[0]).toMatch(/^SECRETS_KEY_PREVIOUS: /);
    expect(problems({ SECRETS_KEY: KEY_A, SECRETS_KEY_PREVIOUS: KEY_A })[0]).toMatch(/^SECRETS_KEY_PREVIOUS: .*same/);
  });

  it('REDIS_TLS_* need a rediss:// URL and readable files; a certificate needs its key', () => {
    const file = __filename;
    expect(ok({ REDIS_URL: 'rediss://:pw-9f8e7d@redis:6380/0', REDIS_TLS_CA_FILE: file }).REDIS_TLS_CA_FILE).toBe(file);
    expect(problems({ REDIS_URL: 'redis://redis:6379/0', REDIS_TLS_CA_FILE: file })[0]).toMatch(/^REDIS_TLS_CA_FILE: needs a rediss:/);
    expect(problems({ REDIS_URL: 'rediss://redis:6380/0', REDIS_TLS_CA_FILE: '/no/such/ca.pem' })[0]).toMatch(/^REDIS_TLS_CA_FILE: must name a file/);
    expect(problems({ REDIS_URL: 'rediss://redis:6380/0', REDIS_TLS_CERT_FILE: file })[0]).toMatch(/^REDIS_TLS_CERT_FILE: .*REDIS_TLS_KEY_FILE/);
  });
});

describe('Redis Cluster settings', () => {
  it('REDIS_CLUSTER_NODES takes host:port seeds, with or without redis://, and becomes the cluster target', () => {
    const config = ok({ REDIS_CLUSTER_NODES: 'node-1:7000, 10.0.0.2:7001,redis://node-3.internal:7002', REDIS_PASSWORD: 'Zq8wP1xK4vR7' });
    expect(config.REDIS_CLUSTER_NODES).toEqual(['node-1:7000', '10.0.0.2:7001', 'redis://node-3.internal:7002']);
    expect(redisTarget(config)).toEqual({
      nodes: [
        { host: 'node-1', port: 7000 },
        { host: '10.0.0.2', port: 7001 },
        { host: 'node-3.internal', port: 7002 },
      ],
      password: 'Zq8wP1xK4vR7',
      tls: false,
    });
    expect(redisTarget(ok({ REDIS_CLUSTER_NODES: 'rediss://a:6379,rediss://b:6379', REDIS_USERNAME: 'gateway' }))).toEqual({
      nodes: [
        { host: 'a', port: 6379 },
        { host: 'b', port: 6379 },
      ],
      username: 'gateway',
      tls: true,
    });
    expect(redisTarget(ok({ REDIS_URL: 'redis://r:6379/0' }))).toBe('redis://r:6379/0');
    expect(redisTarget(ok({}))).toBeUndefined();
  });

  it.each([
    ['node-1', /each node must be host:port/],
    [' , ', /^REDIS_CLUSTER_NODES: /],
    ['redis://:secret@node-1:7000', /the password goes in REDIS_PASSWORD/],
    ['rediss://a:7000,redis://b:7000', /every node must use TLS \(rediss:\/\/\) or none/],
  ])('refuses REDIS_CLUSTER_NODES=%s', (value, message) => {
    const lines = problems({ REDIS_CLUSTER_NODES: value });
    expect(lines.join('\n')).toMatch(message);
    expect(lines.join('\n')).not.toContain('secret@');
  });

  it('one Redis or one cluster; a password setting only for the cluster; TLS files need rediss:// nodes', () => {
    expect(problems({ REDIS_URL: 'redis://r:6379/0', REDIS_CLUSTER_NODES: 'a:7000' })[0]).toMatch(/^REDIS_CLUSTER_NODES: set either REDIS_URL/);
    expect(problems({ REDIS_URL: 'redis://r:6379/0', REDIS_PASSWORD: 'Zq8wP1xK4vR7' })[0]).toMatch(/^REDIS_PASSWORD: only used with REDIS_CLUSTER_NODES/);
    expect(problems({ REDIS_USERNAME: 'gateway' })[0]).toMatch(/^REDIS_USERNAME: only used with REDIS_CLUSTER_NODES/);
    const file = __filename;
    expect(ok({ REDIS_CLUSTER_NODES: 'rediss://a:7000', REDIS_TLS_CA_FILE: file }).REDIS_TLS_CA_FILE).toBe(file);
    expect(problems({ REDIS_CLUSTER_NODES: 'a:7000', REDIS_TLS_CA_FILE: file })[0]).toMatch(/^REDIS_TLS_CA_FILE: needs a rediss:/);
  });

  it('REDIS_PREFIX may not carry hash-tag braces on a cluster (the keys place their own)', () => {
    expect(problems({ REDIS_CLUSTER_NODES: 'a:7000', REDIS_PREFIX: 'igw{x}:' })[0]).toMatch(/^REDIS_PREFIX: must not contain \{ or \}/);
    expect(ok({ REDIS_URL: 'redis://r:6379/0', REDIS_PREFIX: 'igw{x}:' }).REDIS_PREFIX).toBe('igw{x}:');
  });

  it('REDIS_PASSWORD is a secret: logged as [set], refused when a placeholder', () => {
    const config = ok({ REDIS_CLUSTER_NODES: 'a:7000', REDIS_PASSWORD: 'Zq8wP1xK4vR7' });
    const logged = JSON.stringify(redactConfig(config));
    expect(logged).not.toContain('Zq8wP1xK4vR7');
    expect(redactConfig(config).REDIS_PASSWORD).toBe('[set]');
    expect(problems({ REDIS_CLUSTER_NODES: 'a:7000', REDIS_PASSWORD: 'changeme' })[0]).toMatch(/^REDIS_PASSWORD: .*placeholder/);
  });

  it('registry cache sizes have defaults and bounds', () => {
    expect(ok({})).toMatchObject({ REGISTRY_CACHE_MAX_ENTRIES: 100_000, REGISTRY_NEGATIVE_CACHE_MAX_ENTRIES: 10_000 });
    expect(ok({ REGISTRY_CACHE_MAX_ENTRIES: '500000' }).REGISTRY_CACHE_MAX_ENTRIES).toBe(500_000);
    expect(problems({ REGISTRY_NEGATIVE_CACHE_MAX_ENTRIES: '10' })[0]).toMatch(/^REGISTRY_NEGATIVE_CACHE_MAX_ENTRIES: /);
  });
});

/** Request timeouts that fit below a grace (checked at start on their own). */
function timeoutsBelow(graceMs: number): Record<string, string> {
  return { REQUEST_TIMEOUT_MS: String(Math.max(200, graceMs - 500)), HEADERS_TIMEOUT_MS: String(Math.max(100, graceMs - 1000)) };
}
