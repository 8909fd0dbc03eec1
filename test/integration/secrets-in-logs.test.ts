/**
 * Issue 9 item 5: `REDIS_URL=redis://127.0.0.1:6379/0?password=S3cret` printed `S3cret` in the
 * `starting` line. The built gateway runs against a Redis of its own that requires that
 * password, and its whole output is searched for every secret it was given.
 */
import { randomBytes } from 'node:crypto';
import { startSecuredRedis, type SecuredRedis } from '../helpers/secured-redis';
import { startGateway } from '../helpers/server';
import { uniquePrefix } from '../helpers/redis';

const REDIS_PASSWORD = 'S3cret';
const SECRETS_KEY = randomBytes(32).toString('base64');

describe('secrets in the gateway\'s log', () => {
  let redis: SecuredRedis;

  beforeAll(async () => {
    redis = await startSecuredRedis({ password: REDIS_PASSWORD });
  });
  afterAll(async () => {
    await redis?.stop();
  });

  const secretsIn = (env: Record<string, string>) => [
    REDIS_PASSWORD,
    env.ADMIN_TOKEN,
    SECRETS_KEY,
    'base-url-pw',
    'base-url-token',
  ];

  it('never prints the password of a REDIS_URL ?password= parameter, nor any other credential of a URL setting', async () => {
    const env = {
      REDIS_URL: `redis://127.0.0.1:${redis.port}/0?password=${REDIS_PASSWORD}`,
      REDIS_PREFIX: uniquePrefix('logs'),
      PUBLIC_BASE_URL: 'https://ops:base-url-pw@hooks.example.net/?token=base-url-token',
      ADMIN_TOKEN: `admin-${randomBytes(12).toString('hex')}`,
      SECRETS_KEY,
      LOG_LEVEL: 'debug',
    };
    const gateway = await startGateway(env);
    // Connected with the password: it reached Redis, and the line proves the log is being read.
    await gateway.waitForOutput('"msg":"redis connected"');
    expect(await gateway.stop()).toBe(0);
    const output = gateway.output();
    expect(output).toContain('"msg":"starting"');
    expect(output).toContain(`127.0.0.1:${redis.port}`);
    for (const secret of secretsIn(env)) expect(output).not.toContain(secret);
  });

  it('never prints it either while Redis refuses the password (error lines)', async () => {
    const wrong = 'Wr0ngPassw0rdValue';
    const gateway = await startGateway({
      REDIS_URL: `redis://127.0.0.1:${redis.port}/0?password=${wrong}`,
      REDIS_PREFIX: uniquePrefix('logs'),
    });
    await gateway.waitForOutput('"msg":"redis unreachable"');
    expect(await gateway.stop()).toBe(0);
    const output = gateway.output();
    expect(output).toMatch(/WRONGPASS|invalid password|NOAUTH/i);
    expect(output).not.toContain(wrong);
  });
});
