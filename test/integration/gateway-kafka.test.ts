/**
 * The built gateway (dist/main.js, a child process) with KAFKA_BROKERS pointing at
 * librdkafka's mock cluster (started through kcat), kafkajs over TCP, embedded memory stores.
 * What arrives in the topics is read back by kcat's consumer: records as contract §4 says,
 * many concurrent requests in few Produce requests, and a SIGTERM drain that loses nothing.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CloudEvent, Kafka, type KafkaMessage } from 'cloudevents';
import { signWhatsAppBody } from '../helpers/meta-signature';
import {
  APP_SECRET,
  CHANNEL_ID,
  RawConnection,
  TOKEN,
  byEventId,
  eventOf,
  metric,
  orderRequestParts,
  postOrder,
  sinkUp,
  until,
  waitForIds,
  startKafkaGateway,
  type KafkaGateway,
} from '../helpers/gateway-kafka';
import { startKafkaMock, type KafkaMock } from '../helpers/kafka-mock';

const TRIGGERS = 'workflow.triggers';
const CHAT = 'chat.inbound';

describe('gateway → Kafka (mock cluster): records and batching', () => {
  let mock: KafkaMock;
  let gateway: KafkaGateway;

  beforeAll(async () => {
    // Both default topic names, so the gateway's defaults are what is checked.
    mock = await startKafkaMock({ topics: [TRIGGERS, CHAT] });
    // Records and batching, not deadlines: on a busy 2-core machine the 500 concurrent requests
    // below keep the gateway's CPU busy for seconds, as long as the default 5 s deadline. 8 s is
    // the longest deadline the default 25 s grace allows (8 s + 12 s write timeout + 2 s).
    // A linger of 5 ms: with none (the default) a batch goes whenever the one before
    // is acknowledged, so batch sizes follow the machine's speed and this mock's instant answers
    // (the bench measures the default at load; test/unit/batcher.test.ts its rules).
    gateway = await startKafkaGateway(mock.brokers, { PUBLISH_TIMEOUT_MS: '8000', BATCH_LINGER_MS: '5' });
    await sinkUp(gateway.adminUrl);
  });

  afterAll(async () => {
    await gateway?.dispose();
    await mock?.stop();
  });

  test('a webhook POST is one record: key = workflowId, CloudEvents headers, the contract value', async () => {
    const before = new Date();
    const payload = { event: 'order.created', id: 'o-1', data: { total: 42 }, customer: 'ada', note: 'tab\there "q" é 😀' };
    const key = `rec-${randomUUID()}`;
    const answer = await postOrder(gateway.url, key, payload, {
      query: '?source=crm&page=2&api_key=query-secret-1',
      headers: {
        'x-api-key': 'header-secret-2',
        cookie: 'session=cookie-secret-3',
        'x-custom-header': 'kept',
        'user-agent': 'gateway-kafka-test',
      },
    });
    expect(answer.status).toBe(200);
    expect(answer.eventId).toMatch(/^[0-9a-f-]{36}$/);
    expect(answer.json).toEqual({ message: 'Webhook processed', eventId: answer.eventId });

    const [record] = (await waitForIds(mock, [answer.eventId!], TRIGGERS)).filter((r) => r.headers.ce_id === answer.eventId);
    expect(record.topic).toBe(TRIGGERS);
    expect(record.key).toBe('wf-orders');
    expect(record.headers).toEqual({
      'content-type': 'application/cloudevents+json',
      ce_type: 'webhook.trigger',
      ce_id: answer.eventId,
      traceparent: expect.stringMatching(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/),
    });

    const value = eventOf(record);
    expect(Object.keys(value).sort()).toEqual(
      ['data', 'datacontenttype', 'id', 'source', 'specversion', 'subject', 'time', 'traceparent', 'type'].sort(),
    );
    expect(value).toMatchObject({
      specversion: '1.0',
      id: answer.eventId,
      source: '/api/webhooks/trigger/orders',
      type: 'webhook.trigger',
      subject: 'wf-orders',
      datacontenttype: 'application/json',
    });
    expect(value.traceparent).toBe(record.headers.traceparent);
    expect(value.time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(Date.parse(value.time)).toBeGreaterThanOrEqual(before.getTime() - 1000);
    expect(Date.parse(value.time)).toBeLessThanOrEqual(Date.now());

    const data = value.data;
    expect(data).toMatchObject({
      workflowId: 'wf-orders',
      workspaceId: 'ws-kafka',
      triggerPath: 'orders',
      idempotencyKey: key,
      input: payload,
      common: { event: 'order.created', id: 'o-1', data: { total: 42 } },
      method: 'POST',
      contentType: 'application/json',
      query: { source: 'crm', page: '2' },
    });
    // The key is published as data.idempotencyKey; its header, named like a credential, is withheld.
    expect(data.headers).toMatchObject({
      'content-type': 'application/json',
      'x-custom-header': 'kept',
      'user-agent': 'gateway-kafka-test',
    });
    for (const name of Object.keys(data.headers)) expect(name).toBe(name.toLowerCase());
    for (const name of ['authorization', 'cookie', 'x-api-key']) expect(data.headers).not.toHaveProperty(name);
    expect(data.query).not.toHaveProperty('api_key');
    for (const secret of [TOKEN, 'query-secret-1', 'header-secret-2', 'cookie-secret-3']) {
      expect(record.value).not.toContain(secret);
    }

    // An independent reader: the cloudevents SDK's Kafka binding takes the record as a valid
    // structured-mode event, keyed by the workflow.
    const message: KafkaMessage<string> = {
      key: record.key!,
      value: record.value!,
      headers: record.headers,
      body: record.value!,
    };
    expect(Kafka.isEvent(message)).toBe(true);
    const event = Kafka.toEvent(message) as CloudEvent<Record<string, unknown>>;
    expect(event.validate()).toBe(true);
    expect(event.partitionkey).toBe('wf-orders');
    expect(event.id).toBe(answer.eventId);
  });

  test('the same POST again is replayed, not published twice', async () => {
    const key = `replay-${randomUUID()}`;
    const first = await postOrder(gateway.url, key, { n: 1 });
    expect(first.status).toBe(200);
    await waitForIds(mock, [first.eventId!], TRIGGERS);
    const again = await postOrder(gateway.url, key, { n: 1 });
    expect(again.status).toBe(200);
    expect(again.eventId).toBe(first.eventId);

    // A marker published after the replay: once it is read, anything the replay had
    // published would have been read too (one workflow = one key = one partition, in order).
    const marker = await postOrder(gateway.url, `marker-${randomUUID()}`, { marker: true });
    const records = await waitForIds(mock, [marker.eventId!], TRIGGERS);
    expect(records.filter((r) => eventOf(r).data.idempotencyKey === key)).toHaveLength(1);
  });

  test('a signed WhatsApp POST lands on the chat topic keyed <channelId>:<phone>', async () => {
    const body = readFileSync(join(__dirname, '..', 'fixtures', 'whatsapp', 'text.json'));
    const res = await fetch(`${gateway.url}/api/channels/whatsapp/${CHANNEL_ID}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': signWhatsAppBody(body, APP_SECRET) },
      body,
    });
    expect(res.status).toBe(200);

    // The consumer group of a two-topic mock joins after about 3 s.
    const [record] = await mock.waitFor(1, 15_000, CHAT);
    expect(record.key).toBe(`${CHANNEL_ID}:16505551234`);
    expect(record.headers).toEqual({
      'content-type': 'application/cloudevents+json',
      ce_type: 'chat.message',
      ce_id: expect.any(String),
      traceparent: expect.stringMatching(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/),
    });
    const value = eventOf(record);
    expect(value).toMatchObject({
      specversion: '1.0',
      id: record.headers.ce_id,
      source: `/api/channels/whatsapp/${CHANNEL_ID}`,
      type: 'chat.message',
      subject: '16505551234',
      datacontenttype: 'application/json',
      data: {
        workspaceId: 'ws-kafka',
        inboxId: 'inbox-kafka',
        channelId: CHANNEL_ID,
        provider: 'whatsapp',
        messageId: 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=',
        contact: { phone: '16505551234', name: 'Sheena Nelson' },
        replyTo: null,
        message: { content: 'Does it come in another color?' },
      },
    });
    expect(new Date(value.data.timestamp).toISOString()).toBe(value.data.timestamp);
    expect(record.value).not.toContain(APP_SECRET);
    expect(mock.records(TRIGGERS).some((r) => r.headers.ce_id === record.headers.ce_id)).toBe(false);
  });

  test('500 concurrent requests: all 200, all in the topic, in far fewer Produce requests', async () => {
    const count = 500;
    /** One burst of `count` concurrent POSTs; every one 200 and in the topic. Returns the Produce requests it took. */
    const burst = async (round: string) => {
      const before = await metric(gateway.adminUrl, 'igw_kafka_produce_requests_total');
      const answers = await Promise.all(
        Array.from({ length: count }, (_, n) => postOrder(gateway.url, `${round}-${n}-${randomUUID()}`, { round, n })),
      );
      const produceRequests = (await metric(gateway.adminUrl, 'igw_kafka_produce_requests_total')) - before;

      expect(answers.filter((a) => a.status !== 200).map((a) => [a.status, a.json])).toEqual([]);
      const ids = answers.map((a) => a.eventId!);
      expect(new Set(ids).size).toBe(count);
      const records = byEventId(await waitForIds(mock, ids, TRIGGERS, 60_000));
      for (const answer of answers) {
        const record = records.get(answer.eventId!)!;
        expect(record.key).toBe('wf-orders');
        expect(eventOf(record).data.idempotencyKey).toBe(answer.key);
      }
      const latencies = answers.map((a) => a.ms).sort((a, b) => a - b);
      console.log(
        `gateway → Kafka mock, ${round}: ${count} concurrent requests in ${produceRequests} Produce requests ` +
          `(${Math.round((produceRequests / count) * 1000)} per 1000 records; ` +
          `p50 ${Math.round(latencies[count / 2])} ms, slowest ${Math.round(latencies[count - 1])} ms)`,
      );
      return produceRequests;
    };

    // The test client opens 500 connections at once and the gateway accepts them one by one:
    // the requests reach the batcher spread over that time, so batches are smaller.
    const cold = await burst('fresh connections');
    expect(cold).toBeGreaterThanOrEqual(1);
    expect(cold).toBeLessThan(count / 2);
    // On the connections now open, the 500 requests really arrive together.
    const warm = await burst('open connections');
    expect(warm).toBeGreaterThanOrEqual(1);
    expect(warm).toBeLessThan(100);
  }, 180_000);
});

describe('gateway → Kafka (mock cluster with 50 ms rtt): SIGTERM while requests are in flight', () => {
  const topic = `sigterm.${randomUUID().slice(0, 8)}`;
  let mock: KafkaMock;
  let gateway: KafkaGateway;
  const connections: RawConnection[] = [];

  beforeAll(async () => {
    mock = await startKafkaMock({ topics: [topic], rttMs: 50 });
    // The longest deadline the default 25 s grace allows (8 s + 12 s write timeout + 2 s).
    gateway = await startKafkaGateway(mock.brokers, { TOPIC_TRIGGERS: topic, PUBLISH_TIMEOUT_MS: '8000' });
    await sinkUp(gateway.adminUrl);
  });

  afterAll(async () => {
    for (const connection of connections) connection.close();
    await gateway?.dispose();
    await mock?.stop();
  });

  test('readiness goes false, every in-flight request gets its 2xx and its record, exit 0', async () => {
    const warm = await postOrder(gateway.url, `warm-${randomUUID()}`, { warm: true });
    expect(warm.status).toBe(200);

    // Connections the server has certainly accepted (each answered a request already).
    const open = async (port = gateway.port) => {
      const connection = await RawConnection.open(port);
      connections.push(connection);
      await connection.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      expect((await connection.response()).status).toBe(200);
      return connection;
    };
    const whole = await Promise.all(Array.from({ length: 10 }, () => open()));
    const split = await Promise.all(Array.from({ length: 10 }, () => open()));
    // The readiness probe goes to the admin listener.
    const probe = await open(gateway.adminPort);

    // 10 requests sent whole (waiting for Kafka's acknowledgement, 50 ms away) and 10 with
    // half a body when SIGTERM lands; a readiness probe with half its headers.
    const wholeKeys = whole.map((_, n) => `whole-${n}-${randomUUID()}`);
    const splitKeys = split.map((_, n) => `split-${n}-${randomUUID()}`);
    const rests: string[] = [];
    await Promise.all(
      split.map((connection, n) => {
        const [first, rest] = orderRequestParts(splitKeys[n], { n, part: 'split' });
        rests.push(rest);
        return connection.write(first);
      }),
    );
    await probe.write('GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    await Promise.all(
      whole.map((connection, n) => {
        const [first, rest] = orderRequestParts(wholeKeys[n], { n, part: 'whole' });
        return connection.write(first + rest);
      }),
    );
    gateway.child.kill('SIGTERM');
    await gateway.waitForOutput('"msg":"draining"');

    await probe.write('\r\n');
    const ready = await probe.response();
    expect(ready.status).toBe(503);
    expect(JSON.parse(ready.body).error.message).toMatch(/draining/);

    await Promise.all(split.map((connection, n) => connection.write(rests[n])));
    const answers = await Promise.all([...whole, ...split].map((connection) => connection.response()));
    const keys = [...wholeKeys, ...splitKeys];
    expect(answers.map((a) => a.status)).toEqual(keys.map(() => 200));
    const ids = answers.map((a) => a.headers['x-event-id']);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f-]{36}$/);

    expect(await gateway.exited).toBe(0);
    expect(gateway.output()).toContain('"msg":"stopped"');

    const records = byEventId(await waitForIds(mock, ids, topic));
    ids.forEach((id, n) => expect(eventOf(records.get(id)!).data.idempotencyKey).toBe(keys[n]));
  });
});
