/**
 * The built gateway (dist/main.js) when a configured topic does not exist, against a broker
 * that creates a topic whenever a client lets it (Kafka with auto.create.topics.enable=true):
 * librdkafka's mock cluster behind test/helpers/kafka-fault-proxy.ts, which answers Metadata
 * as such a broker would (the mock alone creates every topic it is asked about).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { signWhatsAppBody } from '../helpers/meta-signature';
import { readySchema } from '../../src/openapi/schemas';
import {
  APP_SECRET,
  CHANNEL_ID,
  postOrder,
  readyz,
  startKafkaGateway,
  until,
  type KafkaGateway,
} from '../helpers/gateway-kafka';
import { startKafkaFaultProxy, type KafkaFaultProxy } from '../helpers/kafka-fault-proxy';
import { startKafkaMock, type KafkaMock } from '../helpers/kafka-mock';

const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  while (cleanup.length > 0) await cleanup.pop()!().catch(() => undefined);
});

interface LogLine {
  level: string;
  msg: string;
  [field: string]: unknown;
}

function logLines(gateway: KafkaGateway): LogLine[] {
  return gateway
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);
}

describe('TOPIC_TRIGGERS names a topic that does not exist (a typo), the chat topic exists', () => {
  const typo = `workflow.triggerz.${randomUUID().slice(0, 8)}`;
  const chat = `chat.${randomUUID().slice(0, 8)}`;
  let mock: KafkaMock;
  let proxy: KafkaFaultProxy;
  let gateway: KafkaGateway;

  beforeAll(async () => {
    mock = await startKafkaMock({ topics: [chat] });
    cleanup.push(() => mock.stop());
    proxy = await startKafkaFaultProxy({ upstream: mock.mockAddress, autoCreateTopics: true });
    cleanup.push(() => proxy.stop());
    gateway = await startKafkaGateway(proxy.brokers, { TOPIC_TRIGGERS: typo, TOPIC_CHAT: chat, PUBLISH_TIMEOUT_MS: '2000' });
    cleanup.push(() => gateway.dispose());
  });

  test('at start: an error in the log naming the topic and the cause, /readyz 200 reporting it, and the metrics', async () => {
    await until(async () => (await readyz(gateway.adminUrl)).json.checks?.sink === 'topic_missing', 10_000, 'the missing topic in /readyz');
    const ready = await readyz(gateway.adminUrl);
    expect(ready.status).toBe(200);
    expect(ready.json).toMatchObject({
      status: 'ready',
      checks: { sink: 'topic_missing' },
      details: { sink: { kind: 'kafka', topics: { [typo]: 'missing', [chat]: 'present' } } },
    });
    // As the OpenAPI document describes it.
    readySchema.parse(ready.json);

    await gateway.waitForOutput('"msg":"kafka topic missing');
    const errors = logLines(gateway).filter((line) => line.level === 'error' && line.topic === typo);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ cause: 'UNKNOWN_TOPIC_OR_PARTITION' });
    expect(errors[0].msg).toMatch(/^kafka topic missing/);

    const text = await (await fetch(`${gateway.adminUrl}/metrics`)).text();
    expect(text).toContain(`igw_sink_topic{topic="${typo}",state="missing"} 1`);
    expect(text).toContain(`igw_sink_topic{topic="${chat}",state="present"} 1`);
    expect(text).toContain('igw_dependency_up{dependency="sink"} 0');
  });

  test('a webhook POST gets 503 topic_missing with Retry-After, counted under its reason; the topic is not created', async () => {
    const answer = await postOrder(gateway.url, `typo-${randomUUID()}`, { n: 1 });
    expect(answer.status).toBe(503);
    expect(answer.retryAfter).toMatch(/^\d+$/);
    expect(answer.json.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { reason: 'topic_missing' } });
    expect(await proxy.topicsOnBroker()).not.toContain(typo);
    const text = await (await fetch(`${gateway.adminUrl}/metrics`)).text();
    expect(text).toMatch(/igw_http_requests_total\{[^}]*reason="topic_missing"[^}]*status="503"\} 1/);
  });

  test('a WhatsApp delivery to the chat topic, which exists, is published', async () => {
    const body = readFileSync(join(__dirname, '..', 'fixtures', 'whatsapp', 'text.json'));
    const res = await fetch(`${gateway.url}/api/channels/whatsapp/${CHANNEL_ID}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': signWhatsAppBody(body, APP_SECRET) },
      body,
    });
    expect(res.status).toBe(200);
    const [record] = await mock.waitFor(1, 10_000, chat);
    expect(record.key).toBe(`${CHANNEL_ID}:16505551234`);
  });
});
