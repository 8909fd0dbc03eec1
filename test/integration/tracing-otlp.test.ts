/**
 * Span export over OTLP/HTTP: the built gateway (a child process) with Redis, Kafka (the kcat
 * mock) and OTEL_EXPORTER_OTLP_ENDPOINT pointing at an OTLP receiver in this test. A request
 * with a traceparent must come out as one trace: the sender's span → the gateway's SERVER
 * span → its idempotency and Redis spans, and the Kafka record (header and CloudEvent) whose
 * parent is the SERVER span; the batch write is a PRODUCER span linked to it.
 */
import { randomUUID } from 'node:crypto';
import { signWhatsAppBody } from '../helpers/meta-signature';
import { parseTraceparent } from '../../src/tracing/w3c';
import { APP_SECRET, CHANNEL_ID, PHONE_NUMBER_ID, eventOf, postOrder, sinkUp, startKafkaGateway, waitForIds, type KafkaGateway } from '../helpers/gateway-kafka';
import { startKafkaMock, type KafkaMock } from '../helpers/kafka-mock';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver';
import { deleteKeys, requireRedis, REDIS_TEST_URL, uniquePrefix } from '../helpers/redis';

const TRIGGERS = 'workflow.triggers';
const CHAT = 'chat.inbound';
const SERVER = 2;
const CLIENT = 3;
const PRODUCER = 4;

describe('tracing with OTLP export (gateway + Redis + Kafka mock + OTLP receiver)', () => {
  let receiver: OtlpReceiver;
  let mock: KafkaMock;
  let gateway: KafkaGateway;
  const prefix = uniquePrefix('otel');

  beforeAll(async () => {
    const redis = await requireRedis();
    redis.disconnect();
    receiver = await startOtlpReceiver();
    mock = await startKafkaMock({ topics: [TRIGGERS, CHAT] });
    gateway = await startKafkaGateway(mock.brokers, {
      REDIS_URL: REDIS_TEST_URL,
      REDIS_PREFIX: prefix,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_SERVICE_NAME: 'igw-otel-test',
      // Standard SDK variable: export every 50 ms, so the test does not wait 5 s per batch.
      OTEL_BSP_SCHEDULE_DELAY: '50',
    });
    // /readyz is on the admin listener, and 200 whatever Kafka does: wait for the sink it reports.
    await sinkUp(gateway.adminUrl, 15_000);
  });

  afterAll(async () => {
    await gateway?.dispose();
    await mock?.stop();
    await receiver?.close();
    const redis = await requireRedis();
    await deleteKeys(redis, prefix);
    redis.disconnect();
  });

  const byTrace = (traceId: string) => (spans: ReceivedSpan[]) => spans.filter((s) => s.traceId === traceId);

  test("a webhook with a traceparent: the event continues the sender's trace under the gateway's request span", async () => {
    const senderTraceId = randomUUID().replace(/-/g, '');
    const senderSpanId = randomUUID().replace(/-/g, '').slice(0, 16);
    const answer = await postOrder(gateway.url, `otel-${randomUUID()}`, { hello: 'trace' }, {
      headers: { traceparent: `00-${senderTraceId}-${senderSpanId}-01`, tracestate: 'vendor=abc' },
    });
    expect(answer.status).toBe(200);

    const [record] = (await waitForIds(mock, [answer.eventId!], TRIGGERS)).filter((r) => r.headers.ce_id === answer.eventId);
    const published = parseTraceparent(record.headers.traceparent)!;
    expect(published.traceId).toBe(senderTraceId);
    expect(published.spanId).not.toBe(senderSpanId);
    expect(published.flags).toBe(1);
    expect(record.headers.tracestate).toBe('vendor=abc');
    expect(eventOf(record)).toMatchObject({ traceparent: record.headers.traceparent, tracestate: 'vendor=abc' });

    const spans = await receiver.waitFor((all) => {
      const trace = byTrace(senderTraceId)(all);
      return (
        trace.some((s) => s.kind === SERVER) &&
        trace.some((s) => s.name === 'idempotency.complete') &&
        all.some((s) => s.kind === PRODUCER && s.links.some((l) => l.spanId === published.spanId))
      );
    });
    const trace = byTrace(senderTraceId)(spans);
    const server = trace.find((s) => s.kind === SERVER)!;
    expect(server).toMatchObject({
      spanId: published.spanId,
      parentSpanId: senderSpanId,
      name: 'POST /api/webhooks/trigger/:path',
      attributes: expect.objectContaining({
        'http.request.method': 'POST',
        'http.route': '/api/webhooks/trigger/:path',
        'http.response.status_code': 200,
        'igw.outcome': 'accepted',
        'igw.event_id': answer.eventId,
      }),
      resource: expect.objectContaining({ 'service.name': 'igw-otel-test' }),
    });

    const claim = trace.find((s) => s.name === 'idempotency.claim')!;
    expect(claim).toMatchObject({ parentSpanId: server.spanId, attributes: { 'igw.idempotency.state': 'claimed' } });
    // The claim's Lua script (EVALSHA, or EVAL the first time on a connection) is a Redis span under it.
    const redisUnderClaim = trace.filter((s) => s.kind === CLIENT && s.parentSpanId === claim.spanId);
    expect(redisUnderClaim.map((s) => s.name)).toEqual([expect.stringMatching(/^EVAL(SHA)?$/)]);
    expect(redisUnderClaim[0].attributes).toMatchObject({ 'db.system.name': 'redis' });
    // The rate-limit counters are Redis calls of the same request too.
    expect(trace.filter((s) => s.kind === CLIENT && s.parentSpanId === server.spanId).length).toBeGreaterThan(0);
    expect(trace.find((s) => s.name === 'idempotency.complete')!.parentSpanId).toBe(server.spanId);

    const send = spans.find((s) => s.kind === PRODUCER && s.links.some((l) => l.spanId === server.spanId))!;
    expect(send.name).toBe(`send ${TRIGGERS}`);
    expect(send.traceId).not.toBe(senderTraceId);
    expect(send.links).toContainEqual({ traceId: senderTraceId, spanId: server.spanId });
    expect(send.attributes).toMatchObject({ 'messaging.system': 'kafka', 'messaging.destination.name': TRIGGERS });
    expect(send.attributes['messaging.batch.message_count']).toBeGreaterThanOrEqual(1);
  });

  test('a chat delivery without a traceparent: a new trace whose root is the request span, carried by every event', async () => {
    const message = (id: string) => ({ from: '16505551234', id, timestamp: '1700000000', type: 'text', text: { body: id } });
    const body = JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [
        {
          id: 'e1',
          changes: [
            {
              field: 'messages',
              value: {
                messaging_product: 'whatsapp',
                metadata: { display_phone_number: '1', phone_number_id: PHONE_NUMBER_ID },
                messages: [message(`wamid.${randomUUID()}`), message(`wamid.${randomUUID()}`)],
              },
            },
          ],
        },
      ],
    });
    const before = mock.records(CHAT).length;
    const res = await fetch(`${gateway.url}/api/channels/whatsapp/${CHANNEL_ID}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': signWhatsAppBody(body, APP_SECRET) },
      body,
    });
    expect(res.status).toBe(200);
    const records = (await mock.waitFor((all) => all.length >= before + 2, 15_000, CHAT)).slice(before);
    const contexts = records.map((r) => parseTraceparent(r.headers.traceparent)!);
    expect(contexts[1]).toEqual(contexts[0]);

    const spans = await receiver.waitFor((all) => all.some((s) => s.kind === SERVER && s.spanId === contexts[0].spanId));
    const server = spans.find((s) => s.spanId === contexts[0].spanId)!;
    expect(server.traceId).toBe(contexts[0].traceId);
    expect(server.parentSpanId).toBeUndefined();
    expect(server.name).toBe('POST /api/channels/whatsapp/:channelId');
    expect(receiver.requests.every((r) => r.path === '/v1/traces')).toBe(true);
  });
});
