/**
 * Kafka over the network: the built gateway with KAFKA_SSL and KAFKA_SASL_* against a broker
 * that requires SASL over TLS (librdkafka's mock cluster, which has neither, behind
 * test/helpers/kafka-fault-proxy.ts, which terminates both with a certificate made here by
 * openssl). The password never reaches a log line. And settings that do not fit together stop
 * the process with exit code 2.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { postOrder, readyz, sinkUp, startKafkaGateway, until, waitForIds, type KafkaGateway } from '../helpers/gateway-kafka';
import { startKafkaFaultProxy, type KafkaFaultProxy, type SaslMechanism } from '../helpers/kafka-fault-proxy';
import { startKafkaMock, type KafkaMock } from '../helpers/kafka-mock';
import { runGatewayToExit } from '../helpers/server';
import { tempDir } from '../helpers/tmp';

const PASSWORD = 'sasl-pa55word-7c1e';

const cleanup: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  while (cleanup.length > 0) await Promise.resolve(cleanup.pop()!()).catch(() => undefined);
});

/** A self-signed certificate for 127.0.0.1 (its own CA), made with openssl. */
function certificate(): { key: string; cert: string; certFile: string } {
  const tmp = tempDir('igw-kafka-tls-');
  cleanup.push(() => tmp.cleanup());
  const key = join(tmp.dir, 'key.pem');
  const cert = join(tmp.dir, 'cert.pem');
  try {
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
      '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', key, '-out', cert,
    ], { stdio: 'ignore' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new Error('openssl is not installed: `apt-get install -y openssl`.');
    throw error;
  }
  return { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8'), certFile: cert };
}

async function secureBroker(topic: string, mechanism: SaslMechanism): Promise<{ mock: KafkaMock; proxy: KafkaFaultProxy; caFile: string }> {
  const mock = await startKafkaMock({ topics: [topic] });
  cleanup.push(() => mock.stop());
  const { key, cert, certFile } = certificate();
  const proxy = await startKafkaFaultProxy({
    upstream: mock.mockAddress,
    tls: { key, cert },
    sasl: { mechanism, username: 'gateway', password: PASSWORD },
  });
  cleanup.push(() => proxy.stop());
  await proxy.createTopics(['chat.inbound']); // the gateway checks both of its topics
  return { mock, proxy, caFile: certFile };
}

async function gateway(brokers: string, env: Record<string, string>): Promise<KafkaGateway> {
  const started = await startKafkaGateway(brokers, env);
  cleanup.push(() => started.dispose());
  return started;
}

test.each([
  ['plain', 'PLAIN'],
  ['scram-sha-256', 'SCRAM-SHA-256'],
  ['scram-sha-512', 'SCRAM-SHA-512'],
] as const)('KAFKA_SASL_MECHANISM=%s over KAFKA_SSL: the gateway logs in and publishes; the password is never logged', async (setting, mechanism) => {
  const topic = `secure.${setting}.${randomUUID().slice(0, 8)}`;
  const { mock, proxy, caFile } = await secureBroker(topic, mechanism);
  const gw = await gateway(proxy.brokers, {
    TOPIC_TRIGGERS: topic,
    KAFKA_SSL: 'true',
    KAFKA_SASL_MECHANISM: setting,
    KAFKA_SASL_USERNAME: 'gateway',
    KAFKA_SASL_PASSWORD: PASSWORD,
    NODE_EXTRA_CA_CERTS: caFile,
  });
  await sinkUp(gw.adminUrl);
  const answer = await postOrder(gw.url, `secure-${randomUUID()}`, { secure: true });
  expect(answer.status).toBe(200);
  await waitForIds(mock, [answer.eventId!], topic);

  expect(proxy.logins.length).toBeGreaterThan(0);
  expect(proxy.logins.every((login) => login.mechanism === mechanism && login.ok)).toBe(true);
  expect(proxy.unauthenticatedRequests).toBe(0);
  expect(gw.output()).toContain('"KAFKA_SASL_PASSWORD":"[set]"');
  expect(gw.output()).not.toContain(PASSWORD);
});

test('a wrong password: the login is refused, the sink is reported down, events get 503; the password is not logged', async () => {
  const topic = `secure.wrong.${randomUUID().slice(0, 8)}`;
  const { proxy, caFile } = await secureBroker(topic, 'SCRAM-SHA-512');
  const wrong = 'not-the-pa55word-3b9';
  const gw = await gateway(proxy.brokers, {
    TOPIC_TRIGGERS: topic,
    KAFKA_SSL: 'true',
    KAFKA_SASL_MECHANISM: 'scram-sha-512',
    KAFKA_SASL_USERNAME: 'gateway',
    KAFKA_SASL_PASSWORD: wrong,
    NODE_EXTRA_CA_CERTS: caFile,
    PUBLISH_TIMEOUT_MS: '1500',
  });
  await until(() => proxy.logins.some((login) => !login.ok), 10_000, 'a refused login');
  const ready = await readyz(gw.adminUrl);
  expect(ready.status).toBe(200);
  expect(ready.json.checks.sink).toBe('down');
  const answer = await postOrder(gw.url, `wrong-${randomUUID()}`, { n: 1 });
  expect(answer.status).toBe(503);
  expect(answer.json.error.details.reason).toBe('sink_unavailable');
  expect(proxy.unauthenticatedRequests).toBe(0);
  expect(gw.output()).not.toContain(wrong);
  expect(gw.output()).not.toContain(PASSWORD);
});

describe('settings that do not fit together stop the process with exit code 2', () => {
  test.each([
    [
      'a grace shorter than the longest drain',
      { PUBLISH_TIMEOUT_MS: '5000', SHUTDOWN_GRACE_MS: '10000', REQUEST_TIMEOUT_MS: '9000', HEADERS_TIMEOUT_MS: '5000' },
      /^config error: SHUTDOWN_GRACE_MS: 10000 is shorter than the longest drain, 14500 ms/m,
    ],
    [
      "a deadline too short for kafkajs' attempts",
      { KAFKA_BROKERS: '127.0.0.1:9', PUBLISH_TIMEOUT_MS: '600' },
      /^config error: PUBLISH_TIMEOUT_MS: 600 is too short for Kafka/m,
    ],
    ['a body limit over the record limit', { MAX_BODY_BYTES: '2000000' }, /^config error: MAX_BODY_BYTES: 2000000 is over MAX_RECORD_BYTES/m],
    ['a SASL mechanism without its password', { KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_USERNAME: 'gateway' }, /^config error: KAFKA_SASL_MECHANISM: .*go together/m],
  ])('%s', async (_, env, line) => {
    const { code, output } = await runGatewayToExit({ PORT: '0', HOST: '127.0.0.1', ...env });
    expect(code).toBe(2);
    expect(output).toMatch(line);
  });
});
