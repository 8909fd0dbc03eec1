import { CloudEvent, Kafka, ValidationError, type KafkaMessage } from 'cloudevents';
import request from 'supertest';
import { cloudEvent, toRecord } from '../../src/ingest/cloudevent';
import { testApp } from '../helpers/app';
import { hookUrl, triggerInput } from '../helpers/http';

/** The cloudevents SDK is the oracle: an independent implementation of CloudEvents 1.0. */
describe('published trigger events are valid CloudEvents 1.0 (cloudevents SDK as oracle)', () => {
  const t = testApp();

  beforeAll(async () => {
    await t.addTrigger('ce', triggerInput({ workflowId: 'wf-ce', workspaceId: 'ws-ce' }));
  });

  async function produce(send: (r: request.Test) => request.Test) {
    const res = await send(request(t.app).post(`${hookUrl('ce')}?q=1`));
    expect(res.status).toBe(200);
    const record = t.sink.records.at(-1)!;
    return { res, record, value: JSON.parse(record.value) as Record<string, unknown> };
  }

  it.each<[string, (r: request.Test) => request.Test]>([
    ['a JSON body', (r) => r.send({ event: 'created', id: 'x-1', data: { n: 1 } })],
    ['a form body', (r) => r.type('form').send('a=1&b=2')],
    ['a text body', (r) => r.set('Content-Type', 'text/plain').send('hello')],
    ['an empty body', (r) => r],
    ['a multipart body with a file', (r) => r.field('t', 'v').attach('file[]', Buffer.from([0, 1, 2, 255]), { filename: 'b.bin', contentType: 'application/octet-stream' })],
  ])('%s: the record value passes strict validation', async (_name, send) => {
    const { res, value } = await produce(send);
    const event = new CloudEvent(value); // strict: throws a ValidationError when invalid
    expect(event.validate()).toBe(true);
    expect(event.specversion).toBe('1.0');
    expect(event.id).toBe(res.headers['x-event-id']);
    expect(event.type).toBe('webhook.trigger');
    expect(event.source).toBe('/api/webhooks/trigger/ce');
    expect(event.subject).toBe('wf-ce');
    expect(event.datacontenttype).toBe('application/json');
    expect(event.data).toEqual(value.data);
  });

  it('the record as a whole is a structured-mode Kafka CloudEvent, keyed by workflowId', async () => {
    const { record, value } = await produce((r) => r.send({ kafka: true }));
    const message: KafkaMessage<string> = { key: record.key, value: record.value, headers: record.headers, body: record.value };
    expect(Kafka.isEvent(message)).toBe(true);
    const event = Kafka.toEvent(message) as CloudEvent<Record<string, unknown>>;
    expect(event.validate()).toBe(true);
    expect(event.partitionkey).toBe('wf-ce');
    expect(event.id).toBe(value.id);
    expect(event.id).toBe(record.headers.ce_id);
    expect(event.type).toBe(record.headers.ce_type);
    expect(event.time).toBe(value.time);
    expect(event.data).toEqual(value.data);
    expect((event.data as Record<string, any>).input).toEqual({ kafka: true });
  });
});

describe('cloudEvent() and toRecord()', () => {
  it('build an event the SDK accepts, with the given time', () => {
    const now = new Date('2026-01-02T03:04:05.678Z');
    const built = cloudEvent('webhook.trigger', '/api/webhooks/trigger/p', 'wf', { a: 1 }, undefined, now);
    expect(built.time).toBe('2026-01-02T03:04:05.678Z');
    expect(new CloudEvent({ ...built }).validate()).toBe(true);
    const record = toRecord('topic-a', 'wf', built);
    expect(record).toEqual({
      topic: 'topic-a',
      key: 'wf',
      headers: { 'content-type': 'application/cloudevents+json', ce_type: 'webhook.trigger', ce_id: built.id },
      value: JSON.stringify(built),
    });
  });

  it('carry a trace context as the distributed-tracing extension and as record headers', () => {
    const trace = { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: 'vendor=opaque,other=1' };
    const built = cloudEvent('chat.message', '/api/channels/telegram/c', '42', { a: 1 }, trace);
    const event = new CloudEvent({ ...built });
    expect(event.validate()).toBe(true);
    expect(event.traceparent).toBe(trace.traceparent);
    expect(event.tracestate).toBe(trace.tracestate);
    const record = toRecord('topic-a', 'c:42', built);
    expect(record.headers).toEqual({
      'content-type': 'application/cloudevents+json',
      ce_type: 'chat.message',
      ce_id: built.id,
      traceparent: trace.traceparent,
      tracestate: trace.tracestate,
    });
    const message: KafkaMessage<string> = { key: record.key, value: record.value, headers: record.headers, body: record.value };
    expect((Kafka.toEvent(message) as CloudEvent).traceparent).toBe(trace.traceparent);
  });

  it('leave tracestate out when the context has none', () => {
    const built = cloudEvent('t', '/s', 'x', {}, { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00' });
    expect('tracestate' in built).toBe(false);
    expect(Object.keys(toRecord('t', 'k', built).headers)).not.toContain('tracestate');
  });

  it('gives every event its own id', () => {
    const a = cloudEvent('t', '/s', 'x', {});
    const b = cloudEvent('t', '/s', 'x', {});
    expect(a.id).not.toBe(b.id);
  });

  it('the oracle does reject invalid events (it is not a no-op)', () => {
    const good = cloudEvent('t', '/s', 'x', {});
    expect(() => new CloudEvent({ ...good, source: '' })).toThrow(ValidationError);
    expect(() => new CloudEvent({ ...good, type: '' })).toThrow(ValidationError);
    expect(() => new CloudEvent({ ...good, subject: '' })).toThrow(ValidationError);
    expect(() => new CloudEvent({ ...good, time: 'yesterday' })).toThrow(ValidationError);
  });
});
