/**
 * From the environment to the kafkajs client: TLS, SASL and the derived timeouts reach the
 * `new Kafka(config)` the gateway's container makes, and the producer never asks the broker to
 * create a topic. kafkajs' Kafka class is replaced by one that records its configuration (the
 * same settings are checked against a broker that speaks SASL over TLS in
 * test/integration/gateway-kafka-security.test.ts).
 */
import pino from 'pino';
import { loadConfig } from '../../src/config/load';
import { createContainer } from '../../src/container';
import { kafkaClientConfig } from '../../src/publish/kafka';
import { kafkaTiming } from '../../src/publish/timing';

const seen = { clients: [] as Array<Record<string, any>>, producers: [] as Array<Record<string, any>> };

jest.mock('kafkajs', () => {
  const actual = jest.requireActual('kafkajs');
  class RecordingKafka {
    constructor(config: Record<string, unknown>) {
      seen.clients.push(config);
    }
    producer(config: Record<string, unknown>) {
      seen.producers.push(config);
      return { events: {}, on: () => () => undefined, connect: async () => undefined, disconnect: async () => undefined };
    }
    admin() {
      return { connect: async () => undefined, disconnect: async () => undefined };
    }
  }
  return { ...actual, Kafka: RecordingKafka };
});

const quiet = pino({ level: 'silent' });

function containerFor(env: Record<string, string>) {
  const loaded = loadConfig(env);
  if (!loaded.ok) throw new Error(loaded.problems.join('; '));
  return createContainer(loaded.config, quiet);
}

beforeEach(() => {
  seen.clients.length = 0;
  seen.producers.length = 0;
});

test.each(['plain', 'scram-sha-256', 'scram-sha-512'])('KAFKA_SSL and KAFKA_SASL_* (%s) reach the kafkajs client', async (mechanism) => {
  const container = containerFor({
    KAFKA_BROKERS: 'kafka-1.example:9093,kafka-2.example:9093',
    KAFKA_SSL: 'true',
    KAFKA_SASL_MECHANISM: mechanism,
    KAFKA_SASL_USERNAME: 'gateway',
    KAFKA_SASL_PASSWORD: 'sasl-secret-9f2',
  });
  expect(seen.clients).toHaveLength(1);
  expect(seen.clients[0]).toMatchObject({
    brokers: ['kafka-1.example:9093', 'kafka-2.example:9093'],
    ssl: true,
    sasl: { mechanism, username: 'gateway', password: 'sasl-secret-9f2' },
  });
  await container.close();
});

test('without them: no TLS, no SASL', async () => {
  const container = containerFor({ KAFKA_BROKERS: 'k:9092' });
  expect(seen.clients[0].ssl).toBeUndefined();
  expect(seen.clients[0].sasl).toBeUndefined();
  await container.close();
});

test("the client's timeouts and retries are derived from PUBLISH_TIMEOUT_MS", async () => {
  const container = containerFor({ KAFKA_BROKERS: 'k:9092', PUBLISH_TIMEOUT_MS: '2500' });
  const timing = kafkaTiming(2500);
  expect(seen.clients[0]).toMatchObject({
    requestTimeout: timing.requestTimeoutMs,
    connectionTimeout: timing.connectionTimeoutMs,
    enforceRequestTimeout: true,
    retry: timing.retry,
  });
  expect(timing.retry.retries * timing.requestTimeoutMs).toBeLessThan(2500);
  await container.start();
  expect(seen.producers.length).toBeGreaterThanOrEqual(1);
  for (const producer of seen.producers) expect(producer).toMatchObject({ allowAutoTopicCreation: false, retry: timing.retry });
  await container.close();
});

test('kafkaClientConfig carries nothing of SASL when it is not configured', () => {
  const config = kafkaClientConfig({ brokers: ['k:9092'], clientId: 'c' }, kafkaTiming(5000));
  expect(Object.keys(config).sort()).toEqual(
    ['authenticationTimeout', 'brokers', 'clientId', 'connectionTimeout', 'enforceRequestTimeout', 'requestTimeout', 'retry'].sort(),
  );
});
