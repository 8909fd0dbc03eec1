/**
 * Issue 9 item 13: Redis over TLS with a password (rediss://), against a redis-server started
 * here with TLS only, its certificates made by a throw-away CA (openssl). The settings are
 * parsed, handed to ioredis, and the connection really is TLS: the plain port is closed.
 */
import Redis from 'ioredis';
import { loadConfig } from '../../src/config/load';
import type { Config } from '../../src/config/schema';
import { RedisConnection } from '../../src/redis/connection';
import { redisTlsOptions } from '../../src/redis/tls';
import { RedisRegistry } from '../../src/registry/redis';
import { capturingLogger, silentLogger, uniquePrefix } from '../helpers/redis';
import { makeTestPki, startSecuredRedis, type SecuredRedis, type TestPki } from '../helpers/secured-redis';
import { startGateway } from '../helpers/server';
import { tempDir } from '../helpers/tmp';
import { readyConnection } from '../helpers/redis-setups';
import { waitUntil } from '../helpers/wait';

const PASSWORD = 'tls-redis-pw-7d41';

function config(env: Record<string, string>): Config {
  const result = loadConfig(env);
  if (!result.ok) throw new Error(result.problems.join('; '));
  return result.config;
}

describe('Redis over TLS with a password', () => {
  const tmp = tempDir('igw-tls-');
  let pki: TestPki;
  let redis: SecuredRedis;
  let mtls: SecuredRedis;

  beforeAll(async () => {
    pki = makeTestPki(tmp.dir);
    redis = await startSecuredRedis({ password: PASSWORD, pki });
    mtls = await startSecuredRedis({ password: PASSWORD, pki, requireClientCert: true });
  });

  afterAll(async () => {
    await redis?.stop();
    await mtls?.stop();
    tmp.cleanup();
  });

  it('parses the settings into the TLS options ioredis gets', async () => {
    const settings = config({
      REDIS_URL: redis.url,
      REDIS_TLS_CA_FILE: pki.caFile,
      REDIS_TLS_CERT_FILE: pki.clientCertFile,
      REDIS_TLS_KEY_FILE: pki.clientKeyFile,
    });
    const tls = redisTlsOptions(settings)!;
    expect(tls.rejectUnauthorized).toBe(true);
    expect(String(tls.ca)).toContain('BEGIN CERTIFICATE');
    expect(String(tls.cert)).toContain('BEGIN CERTIFICATE');
    expect(String(tls.key)).toContain('PRIVATE KEY');
    const connection = new RedisConnection({ target: settings.REDIS_URL!, timeoutMs: 1000, tls }, silentLogger());
    const { options } = connection.client as Redis;
    expect(options.tls).toMatchObject({ ca: tls.ca, rejectUnauthorized: true });
    expect(options.password).toBe(PASSWORD);
    await connection.close();
    expect(redisTlsOptions(config({ REDIS_URL: 'redis://127.0.0.1:6379/0' }))).toBeUndefined();
    expect(redisTlsOptions(config({ REDIS_URL: 'rediss://redis.example.net:6380/0' }))).toEqual({ rejectUnauthorized: true });
  });

  it('reads and writes the registry over rediss:// with the test CA', async () => {
    const connection = new RedisConnection({ target: redis.url, timeoutMs: 1000, tls: redisTlsOptions(config({ REDIS_URL: redis.url, REDIS_TLS_CA_FILE: pki.caFile })) }, silentLogger());
    await readyConnection(connection);
    const registry = new RedisRegistry(connection, uniquePrefix('tls'), silentLogger());
    try {
      await connection.ping();
      await registry.start();
      await registry.triggers.put('over-tls', { workflowId: 'wf', workspaceId: 'ws', deployed: true, updatedAt: '2025-01-01T00:00:00.000Z' });
      await expect(registry.triggers.get('over-tls')).resolves.toMatchObject({ workflowId: 'wf' });
    } finally {
      await registry.close();
      await connection.close();
    }
  });

  it('refuses a server certificate it cannot verify, without the password in the reason', async () => {
    const logs = capturingLogger();
    const connection = new RedisConnection({ target: redis.url, timeoutMs: 500, tls: redisTlsOptions(config({ REDIS_URL: redis.url })) }, logs.logger);
    try {
      await connection.start();
      await expect(connection.ping()).rejects.toThrow(/redis: /);
      await waitUntil(() => /certificate/i.test(logs.text()), 'the refused certificate in the log');
      expect(logs.text()).not.toContain(PASSWORD);
    } finally {
      await connection.close();
    }
  });

  it('sends the client certificate to a Redis that requires one (tls-auth-clients yes)', async () => {
    const withCert = config({ REDIS_URL: mtls.url, REDIS_TLS_CA_FILE: pki.caFile, REDIS_TLS_CERT_FILE: pki.clientCertFile, REDIS_TLS_KEY_FILE: pki.clientKeyFile });
    const connection = new RedisConnection({ target: mtls.url, timeoutMs: 1000, tls: redisTlsOptions(withCert) }, silentLogger());
    try {
      await readyConnection(connection);
      await expect(connection.ping()).resolves.toBeUndefined();
    } finally {
      await connection.close();
    }
    const withoutCert = new RedisConnection({ target: mtls.url, timeoutMs: 500, tls: redisTlsOptions(config({ REDIS_URL: mtls.url, REDIS_TLS_CA_FILE: pki.caFile })) }, silentLogger());
    try {
      await withoutCert.start();
      await expect(withoutCert.ping()).rejects.toThrow(/redis: /);
    } finally {
      await withoutCert.close();
    }
  });

  it('the built gateway connects over TLS with REDIS_TLS_CA_FILE and never logs the password', async () => {
    const gateway = await startGateway({ REDIS_URL: redis.url, REDIS_TLS_CA_FILE: pki.caFile, REDIS_PREFIX: uniquePrefix('tls-gw'), LOG_LEVEL: 'debug' });
    try {
      await gateway.waitForOutput('"msg":"redis connected"');
      const observer = new Redis(redis.url, { ...redis.clientOptions, lazyConnect: true, maxRetriesPerRequest: 0 });
      try {
        await observer.connect();
        expect(String(await observer.client('LIST'))).toContain('name=ingress-gateway');
      } finally {
        observer.disconnect();
      }
    } finally {
      expect(await gateway.stop()).toBe(0);
    }
    expect(gateway.output()).not.toContain(PASSWORD);
  });
});
