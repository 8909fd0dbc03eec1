import request from 'supertest';
import { signWhatsAppBody } from '../helpers/meta-signature';
import { parseTraceparent } from '../../src/tracing/w3c';
import { testApp } from '../helpers/app';
import { hookUrl, triggerInput } from '../helpers/http';

/**
 * Without span export (no OTLP endpoint) every published event still carries a W3C trace
 * context: the sender's, passed through unchanged, or a new trace. It is the CloudEvents
 * distributed-tracing extension (`traceparent`, `tracestate`) and the Kafka record headers.
 */
const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const TRACESTATE = 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE';
const TELEGRAM_SECRET = 'telegram-secret_token-for-tracing';
const APP_SECRET = 'whatsapp-app-secret-for-tracing';

describe('trace context of published events (no span export)', () => {
  const t = testApp();

  beforeAll(async () => {
    await t.addTrigger('traced', triggerInput({ workflowId: 'wf-traced' }));
    await t.addChannel('tg-traced', { provider: 'telegram', workspaceId: 'ws', inboxId: 'in', secretToken: TELEGRAM_SECRET });
    await t.addChannel('wa-traced', { provider: 'whatsapp', workspaceId: 'ws', inboxId: 'in', phoneNumberId: '1065', verifyToken: 'v', appSecret: APP_SECRET });
  });

  async function publishWebhook(headers: Record<string, string>) {
    const res = await request(t.app).post(hookUrl('traced')).set(headers).send({ n: Math.random() });
    expect(res.status).toBe(200);
    const record = t.sink.records.find((r) => r.headers.ce_id === res.headers['x-event-id'])!;
    return { record, event: JSON.parse(record.value) as Record<string, unknown> };
  }

  it("continues the sender's trace as it came: traceparent and tracestate in the event and the record headers", async () => {
    const { record, event } = await publishWebhook({ traceparent: TRACEPARENT, tracestate: TRACESTATE });
    expect(event.traceparent).toBe(TRACEPARENT);
    expect(event.tracestate).toBe(TRACESTATE);
    expect(record.headers.traceparent).toBe(TRACEPARENT);
    expect(record.headers.tracestate).toBe(TRACESTATE);
  });

  it('starts a new sampled trace for each request without one', async () => {
    const first = await publishWebhook({});
    const second = await publishWebhook({});
    const [a, b] = [first, second].map(({ event }) => parseTraceparent(event.traceparent as string)!);
    expect(a.flags).toBe(1);
    expect(a.traceId).not.toBe(b.traceId);
    expect(first.record.headers.traceparent).toBe(first.event.traceparent);
    expect('tracestate' in first.event).toBe(false);
  });

  it('starts a new trace for an invalid traceparent, and drops its tracestate', async () => {
    const { record, event } = await publishWebhook({ traceparent: `00-${'0'.repeat(32)}-b7ad6b7169203331-01`, tracestate: TRACESTATE });
    expect(parseTraceparent(event.traceparent as string)!.traceId).not.toBe('0'.repeat(32));
    expect(event.tracestate).toBeUndefined();
    expect(record.headers.tracestate).toBeUndefined();
  });

  it('keeps the traceparent but drops an invalid tracestate', async () => {
    const { event } = await publishWebhook({ traceparent: TRACEPARENT, tracestate: 'Invalid Key=1' });
    expect(event.traceparent).toBe(TRACEPARENT);
    expect(event.tracestate).toBeUndefined();
  });

  it('gives every event of a chat delivery the trace of its request (Telegram)', async () => {
    const before = t.sink.records.length;
    const update = { update_id: 777001, message: { message_id: 1, date: 1_700_000_000, chat: { id: 5, type: 'private' }, from: { id: 5, is_bot: false, first_name: 'A' }, text: 'hi' } };
    const res = await request(t.app)
      .post('/api/channels/telegram/tg-traced')
      .set('X-Telegram-Bot-Api-Secret-Token', TELEGRAM_SECRET)
      .set('traceparent', TRACEPARENT)
      .send(update);
    expect(res.status).toBe(200);
    const [record] = t.sink.records.slice(before);
    expect(record.headers.traceparent).toBe(TRACEPARENT);
    expect(JSON.parse(record.value).traceparent).toBe(TRACEPARENT);
  });

  it('gives every event of a chat delivery the trace of its request (WhatsApp, two messages)', async () => {
    const before = t.sink.records.length;
    const message = (id: string) => ({ from: '16505551234', id, timestamp: '1700000000', type: 'text', text: { body: id } });
    const body = JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [{ id: 'e', changes: [{ field: 'messages', value: { messaging_product: 'whatsapp', metadata: { display_phone_number: '1', phone_number_id: '1065' }, messages: [message('wamid.T1'), message('wamid.T2')] } }] }],
    });
    const res = await request(t.app)
      .post('/api/channels/whatsapp/wa-traced')
      .set('Content-Type', 'application/json')
      .set('X-Hub-Signature-256', signWhatsAppBody(Buffer.from(body), APP_SECRET))
      .set('traceparent', TRACEPARENT)
      .set('tracestate', TRACESTATE)
      .send(body);
    expect(res.status).toBe(200);
    const records = t.sink.records.slice(before);
    expect(records).toHaveLength(2);
    for (const record of records) expect(record.headers).toMatchObject({ traceparent: TRACEPARENT, tracestate: TRACESTATE });
  });
});
