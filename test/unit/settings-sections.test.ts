/**
 * Each adapter receives its own typed section of the settings, built by the container from
 * the environment, not the whole config.
 */
import { loadConfig } from '../../src/config/load';
import type { Config } from '../../src/config/schema';
import { fileSinkSettings, kafkaSettings, redisSettings, tracingSettings } from '../../src/container';
import { kafkaTiming } from '../../src/publish/timing';

function config(env: Record<string, string>): Config {
  const loaded = loadConfig(env);
  if (!loaded.ok) throw new Error(loaded.problems.join('; '));
  return loaded.config;
}

test('the Kafka sink: brokers, client, both topics, TLS, SASL and the timings of PUBLISH_TIMEOUT_MS', () => {
  const settings = kafkaSettings(
    config({
      KAFKA_BROKERS: 'k1:9093,k2:9093',
      KAFKA_CLIENT_ID: 'gw',
      KAFKA_IDEMPOTENT: 'false',
      KAFKA_COMPRESSION: 'gzip',
      KAFKA_SSL: 'true',
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
      KAFKA_SASL_USERNAME: 'gateway',
      KAFKA_SASL_PASSWORD: 'sasl-secret-9f2',
      TOPIC_TRIGGERS: 'wf.in',
      TOPIC_CHAT: 'chat.in',
      PUBLISH_TIMEOUT_MS: '2500',
    }),
  );
  expect(settings).toEqual({
    brokers: ['k1:9093', 'k2:9093'],
    clientId: 'gw',
    idempotent: false,
    compression: 'gzip',
    topics: ['wf.in', 'chat.in'],
    timing: kafkaTiming(2500),
    ssl: true,
    sasl: { mechanism: 'scram-sha-512', username: 'gateway', password: 'sasl-secret-9f2' },
  });
});

test('no Kafka section without KAFKA_BROKERS; the file sink gets EVENTS_DIR', () => {
  const embedded = config({ EVENTS_DIR: '/var/lib/events' });
  expect(kafkaSettings(embedded)).toBeUndefined();
  expect(fileSinkSettings(embedded)).toEqual({ dir: '/var/lib/events' });
});

test('the Redis connection: its target and timeout; TLS options only for rediss://', () => {
  expect(redisSettings(config({ REDIS_URL: 'redis://r:6379/0', REDIS_TIMEOUT_MS: '700' }))).toEqual({
    target: 'redis://r:6379/0',
    timeoutMs: 700,
    tls: undefined,
  });
  expect(redisSettings(config({ REDIS_URL: 'rediss://r:6380/0' }))?.tls).toEqual({ rejectUnauthorized: true });
  expect(redisSettings(config({ REDIS_CLUSTER_NODES: 'a:7000,b:7001', REDIS_PASSWORD: 'Zq8wP1xK4vR7' }))?.target).toEqual({
    nodes: [
      { host: 'a', port: 7000 },
      { host: 'b', port: 7001 },
    ],
    password: 'Zq8wP1xK4vR7',
    tls: false,
  });
  expect(redisSettings(config({}))).toBeUndefined();
});

test('tracing: the OTLP traces URL (none without an endpoint) and the service name', () => {
  expect(tracingSettings(config({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel:4318/', OTEL_SERVICE_NAME: 'gw' }))).toEqual({
    tracesUrl: 'http://otel:4318/v1/traces',
    serviceName: 'gw',
  });
  expect(tracingSettings(config({}))).toEqual({ tracesUrl: undefined, serviceName: 'ingress-gateway' });
});
