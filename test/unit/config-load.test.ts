import { loadConfig, redactConfig } from '../../src/config/load';

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
      PUBLISH_TIMEOUT_MS: '250',
    });
    expect(config).toMatchObject({
      PORT: 0,
      KAFKA_BROKERS: ['k1:9092', 'k2:9093'],
      KAFKA_IDEMPOTENT: false,
      RATE_LIMIT_DEFAULT: { limit: 10, windowSeconds: 1 },
      RATE_LIMIT_WORKSPACE: { limit: 1000000, windowSeconds: 86400 },
      PUBLISH_TIMEOUT_MS: 250,
    });
  });

  it('treats empty strings as unset and ignores variables it does not know', () => {
    const config = ok({ PORT: '', ADMIN_TOKEN: '', REDIS_URL: '', HOME: '/root', SOMETHING_ELSE: 'x' });
    expect(config.PORT).toBe(8080);
    expect(config.ADMIN_TOKEN).toBeUndefined();
    expect(config.REDIS_URL).toBeUndefined();
    expect(config).not.toHaveProperty('HOME');
  });

  it('returns one line per problem, each naming its variable', () => {
    const lines = problems({
      PORT: '70000',
      ADMIN_TOKEN: 'short',
      REDIS_URL: 'http://x',
      KAFKA_BROKERS: 'nohost',
      KAFKA_IDEMPOTENT: 'maybe',
      RATE_LIMIT_DEFAULT: '600 per minute',
      RATE_LIMIT_WORKSPACE: '0/60',
      PUBLISH_TIMEOUT_MS: 'soon',
      TOPIC_TRIGGERS: 'bad topic',
    });
    const names = ['PORT', 'ADMIN_TOKEN', 'REDIS_URL', 'KAFKA_BROKERS', 'KAFKA_IDEMPOTENT', 'RATE_LIMIT_DEFAULT', 'RATE_LIMIT_WORKSPACE', 'PUBLISH_TIMEOUT_MS', 'TOPIC_TRIGGERS'];
    for (const name of names) expect(lines.filter((line) => line.startsWith(`${name}`)).length).toBeGreaterThanOrEqual(1);
    for (const line of lines) expect(line).not.toContain('\n');
    expect(lines.find((l) => l.startsWith('RATE_LIMIT_DEFAULT'))).toContain('<requests>/<seconds>');
  });

  it.each([['PORT', '-1'], ['PORT', '80.5'], ['PUBLISH_TIMEOUT_MS', '99'], ['RATE_LIMIT_DEFAULT', '60'], ['RATE_LIMIT_DEFAULT', '5/0'], ['LOG_LEVEL', 'loud']])(
    '%s=%s is refused',
    (name, value) => {
      expect(problems({ [name]: value }).some((line) => line.startsWith(name))).toBe(true);
    },
  );
});

describe('redactConfig', () => {
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

  it('leaves a config without secrets as it is', () => {
    const config = ok({});
    expect(redactConfig(config)).toEqual({ ...config });
  });
});
