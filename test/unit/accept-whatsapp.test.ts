import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { signWhatsAppBody } from '../helpers/meta-signature';
import { configSchema } from '../../src/config/schema';
import { renderRefusal } from '../../src/http/errors';
import { Refusal } from '../../src/outcomes/refusal';
import { MemoryIdempotencyStore } from '../../src/idempotency/memory';
import type { ClaimResult } from '../../src/idempotency/store';
import { CHAT_DEDUPE_WINDOW_MS } from '../../src/ingest/accept-chat';
import { acceptChannelDelivery } from '../../src/ingest/accept-channel';
import type { IngestDeps, Publisher } from '../../src/ingest/ports';
import { CHANNEL_FOREIGN_METRICS } from '../../src/providers/channels';
import { createMetrics } from '../../src/observability/metrics';
import { channelGate, channelSender } from '../../src/providers/channel-gate';
import { PublishError } from '../../src/publish/errors';
import type { OutRecord } from '../../src/publish/sink';
import { toStoredChannel } from '../../src/registry/records';
import type { WhatsAppChannel } from '../../src/registry/schemas';
import { loggerToLines } from '../helpers/log-lines';

const APP_SECRET = 'unit-app-secret';
const CHANNEL_ID = 'ch_unit';
const channel = toStoredChannel({
  provider: 'whatsapp',
  workspaceId: 'ws_u',
  inboxId: 'in_u',
  phoneNumberId: '106540352242922',
  verifyToken: 'unit-verify-token',
  appSecret: APP_SECRET,
}) as WhatsAppChannel;
const BATCH = readFileSync(join(__dirname, '..', 'fixtures', 'whatsapp', 'batch.json'));

/** A publisher whose calls the test settles by hand. */
class ManualPublisher implements Publisher {
  readonly calls: Array<{ records: OutRecord[]; timeoutMs: number; resolve(): void; reject(error: Error): void }> = [];

  publish(records: OutRecord[], timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => this.calls.push({ records, timeoutMs, resolve, reject }));
  }
}

/** Acknowledges every call at once. */
class AckPublisher implements Publisher {
  readonly calls: OutRecord[][] = [];
  async publish(records: OutRecord[]): Promise<void> {
    this.calls.push(records);
  }
}

function makeDeps(publisher: Publisher, env: Record<string, string> = {}, idempotency = new MemoryIdempotencyStore({ maxKeys: 10_000 })) {
  const { logger, logLines } = loggerToLines();

  const deps: IngestDeps = { config: configSchema.parse(env), idempotency, publisher, logger, metrics: createMetrics(CHANNEL_FOREIGN_METRICS) };
  return { deps, logLines, idempotency };
}

interface WhatsAppDelivery {
  raw: Buffer;
  signature: string;
}

function delivery(raw: Buffer = BATCH, signature = signWhatsAppBody(raw, APP_SECRET)): WhatsAppDelivery {
  return { raw, signature };
}

/** What the channel route runs below HTTP: the sender's gate on the raw bytes, then the accept path. */
async function acceptWhatsApp(deps: IngestDeps, { raw, signature }: WhatsAppDelivery) {
  const sender = channelSender(CHANNEL_ID, channel);
  const request = { headers: { 'x-hub-signature-256': signature }, query: {}, url: `https://gw.example.com/api/channels/whatsapp/${CHANNEL_ID}` };
  const gate = channelGate(sender, request, deps.metrics);
  gate.beforeBody();
  gate.afterBody(raw);
  return acceptChannelDelivery(deps, { sender, raw, contentType: 'application/json', url: request.url, requestId: 'req-1' });
}

async function httpErrorOf(promise: Promise<unknown>): Promise<Refusal> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Refusal);
  return error as Refusal;
}

async function nextTick(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
}

describe('acceptWhatsApp', () => {
  it('checks the signature before anything else: no claim, no publish', async () => {
    const publisher = new AckPublisher();
    const { deps, idempotency } = makeDeps(publisher);
    const claim = jest.spyOn(idempotency, 'claim');
    const error = await httpErrorOf(acceptWhatsApp(deps, delivery(BATCH, 'sha256=' + '0'.repeat(64))));
    expect(error.code).toBe('UNAUTHORIZED');
    expect(claim).not.toHaveBeenCalled();
    expect(publisher.calls).toHaveLength(0);
  });

  it('publishes every new event on TOPIC_CHAT, one publisher call each, and completes each claim for 7 days', async () => {
    const publisher = new ManualPublisher();
    const { deps, idempotency } = makeDeps(publisher, { TOPIC_CHAT: 'chat.custom', PUBLISH_TIMEOUT_MS: '1234' });
    const complete = jest.spyOn(idempotency, 'complete');
    const pending = acceptWhatsApp(deps, delivery());
    await nextTick();
    expect(publisher.calls).toHaveLength(8);
    for (const call of publisher.calls) {
      expect(call.timeoutMs).toBe(1234);
      expect(call.records).toHaveLength(1);
      expect(call.records[0].topic).toBe('chat.custom');
    }
    expect(complete).not.toHaveBeenCalled(); // nothing is remembered before the sink acknowledged

    for (const call of publisher.calls) call.resolve();
    await expect(pending).resolves.toEqual({ received: 8, published: 8, duplicates: 0, foreign: 1, invalid: 0, ignored: 0 });
    expect(complete).toHaveBeenCalledTimes(8);
    expect(complete.mock.calls.map((c) => c[0])).toContain(`wa:ws_u:106540352242922:${CHANNEL_ID}:wamid.BATCH.OUT1:delivered`);
    for (const [, , , response, ttl] of complete.mock.calls) {
      expect(ttl).toBe(CHAT_DEDUPE_WINDOW_MS);
      expect(response.status).toBe(200);
    }
  });

  it('answers a concurrent duplicate with 503 in_flight, then drops it as a duplicate once the first completes', async () => {
    const publisher = new ManualPublisher();
    const { deps } = makeDeps(publisher);
    const first = acceptWhatsApp(deps, delivery());
    await nextTick();
    const second = await httpErrorOf(acceptWhatsApp(deps, delivery()));
    expect(second.code).toBe('SERVICE_UNAVAILABLE');
    expect(second.reason).toBe('events_in_flight');
    expect(second.details).toEqual({ missing: 8 });
    expect(renderRefusal(second).headers['Retry-After']).toMatch(/^\d+$/);
    expect(publisher.calls).toHaveLength(8); // the second published nothing

    for (const call of publisher.calls) call.resolve();
    await expect(first).resolves.toMatchObject({ published: 8 });
    await expect(acceptWhatsApp(deps, delivery())).resolves.toMatchObject({ published: 0, duplicates: 8 });
    expect(publisher.calls).toHaveLength(8);
  });

  it('releases every claim when the sink fails, so the retry publishes all events', async () => {
    const publisher = new ManualPublisher();
    const { deps, idempotency } = makeDeps(publisher);
    const release = jest.spyOn(idempotency, 'release');
    const first = acceptWhatsApp(deps, delivery());
    await nextTick();
    for (const call of publisher.calls) call.reject(new PublishError('timeout', 'sink did not acknowledge'));
    const error = await httpErrorOf(first);
    expect(error.code).toBe('SERVICE_UNAVAILABLE');
    expect(error.reason).toBe('timeout');
    expect(error.details).toEqual({ missing: 8 });
    expect(release).toHaveBeenCalledTimes(8);

    const retry = acceptWhatsApp(deps, delivery());
    await nextTick();
    expect(publisher.calls.slice(8)).toHaveLength(8);
    for (const call of publisher.calls.slice(8)) call.resolve();
    await expect(retry).resolves.toMatchObject({ published: 8, duplicates: 0 });
  });

  it('completes the events the sink acknowledged and 503s for the one it refused; the retry publishes only that one', async () => {
    const publisher = new ManualPublisher();
    const { deps, idempotency } = makeDeps(publisher);
    const complete = jest.spyOn(idempotency, 'complete');
    const release = jest.spyOn(idempotency, 'release');
    const first = acceptWhatsApp(deps, delivery());
    await nextTick();
    const refused = publisher.calls.find((call) => call.records[0].value.includes('wamid.BATCH.A3'))!;
    for (const call of publisher.calls) {
      if (call === refused) call.reject(new PublishError('unavailable', 'partition leader moved'));
      else call.resolve();
    }
    const error = await httpErrorOf(first);
    expect(error.code).toBe('SERVICE_UNAVAILABLE');
    expect(error.reason).toBe('sink_unavailable');
    expect(error.details).toEqual({ missing: 1 });
    expect(complete).toHaveBeenCalledTimes(7);
    expect(release.mock.calls).toEqual([[`wa:ws_u:106540352242922:${CHANNEL_ID}:wamid.BATCH.A3`, expect.any(String)]]);

    const retry = acceptWhatsApp(deps, delivery());
    await nextTick();
    const again = publisher.calls.slice(8);
    expect(again.map((call) => JSON.parse(call.records[0].value).data.messageId)).toEqual(['wamid.BATCH.A3']);
    again[0].resolve();
    await expect(retry).resolves.toMatchObject({ published: 1, duplicates: 7 });
  });

  it('maps a record over the sink limit to 413 and releases its claim only', async () => {
    const publisher = new ManualPublisher();
    const { deps, idempotency } = makeDeps(publisher);
    const pending = acceptWhatsApp(deps, delivery());
    await nextTick();
    publisher.calls[0].reject(new PublishError('too_large', 'record too large'));
    for (const call of publisher.calls.slice(1)) call.resolve();
    expect((await httpErrorOf(pending)).code).toBe('PAYLOAD_TOO_LARGE');
    await expect(idempotency.claim(`wa:ws_u:106540352242922:${CHANNEL_ID}:wamid.BATCH.A1`, 'probe', 'x', 1000)).resolves.toEqual({ state: 'claimed' });
    await expect(idempotency.claim(`wa:ws_u:106540352242922:${CHANNEL_ID}:wamid.BATCH.A2`, 'probe', 'x', 1000)).resolves.toMatchObject({ state: 'completed' });
  });

  it('answers 503 rather than 413 when a record was too large and another is merely missing', async () => {
    const publisher = new ManualPublisher();
    const { deps } = makeDeps(publisher);
    const pending = acceptWhatsApp(deps, delivery());
    await nextTick();
    publisher.calls[0].reject(new PublishError('too_large', 'record too large'));
    publisher.calls[1].reject(new PublishError('queue_full', 'publish queue is full'));
    for (const call of publisher.calls.slice(2)) call.resolve();
    const error = await httpErrorOf(pending);
    expect(error.code).toBe('SERVICE_UNAVAILABLE');
    expect(error.reason).toBe('queue_full');
    expect(error.details).toEqual({ missing: 2 });
  });

  it('rethrows a programming error from the publisher as is (500), after completing what was acknowledged', async () => {
    const publisher = new ManualPublisher();
    const { deps, idempotency } = makeDeps(publisher);
    const complete = jest.spyOn(idempotency, 'complete');
    const pending = acceptWhatsApp(deps, delivery());
    await nextTick();
    publisher.calls[0].reject(new TypeError('cannot read properties of undefined'));
    for (const call of publisher.calls.slice(1)) call.resolve();
    await expect(pending).rejects.toBeInstanceOf(TypeError);
    expect(complete).toHaveBeenCalledTimes(7);
  });

  it('publishes without dedupe when the store fails and IDEMPOTENCY_ON_STORE_ERROR=accept', async () => {
    const publisher = new AckPublisher();
    const { deps, idempotency } = makeDeps(publisher, { IDEMPOTENCY_ON_STORE_ERROR: 'accept' });
    jest.spyOn(idempotency, 'claim').mockRejectedValue(new Error('store down'));
    const complete = jest.spyOn(idempotency, 'complete');
    await expect(acceptWhatsApp(deps, delivery())).resolves.toMatchObject({ published: 8 });
    expect(publisher.calls.flat()).toHaveLength(8);
    expect(complete).not.toHaveBeenCalled();
  });

  it('publishes the events it could claim and 503s for the one the store failed on (refuse mode)', async () => {
    const publisher = new AckPublisher();
    const { deps, idempotency } = makeDeps(publisher, { IDEMPOTENCY_ON_STORE_ERROR: 'refuse' });
    const realClaim = idempotency.claim.bind(idempotency);
    jest.spyOn(idempotency, 'claim').mockImplementation((key, owner, hash, lease): Promise<ClaimResult> =>
      key.endsWith(':wamid.BATCH.A3') ? Promise.reject(new Error('store down')) : realClaim(key, owner, hash, lease),
    );
    const error = await httpErrorOf(acceptWhatsApp(deps, delivery()));
    expect(error.code).toBe('SERVICE_UNAVAILABLE');
    expect(error.reason).toBe('store_unavailable');
    expect(error.details).toEqual({ missing: 1 });
    const published = publisher.calls.flat().map((r) => JSON.parse(r.value).data.messageId);
    expect(published).toHaveLength(7);
    expect(published).not.toContain('wamid.BATCH.A3');
  });

  it('counts and logs foreign changes without payload content', async () => {
    const { deps, logLines } = makeDeps(new AckPublisher());
    await acceptWhatsApp(deps, delivery());
    expect(await deps.metrics.registry.getSingleMetricAsString('igw_whatsapp_foreign_changes_total')).toMatch(
      /igw_whatsapp_foreign_changes_total 1$/m,
    );
    const log = logLines.join('');
    expect(log).toContain('"foreign":1');
    expect(log).toContain('"channelId":"ch_unit"');
    expect(log).toContain('"reqId":"req-1"');
    expect(log).not.toContain('For the other number');
    expect(log).not.toContain('wamid');
  });

  it('reports at most 20 schema issues for a body that is not a WhatsApp webhook', async () => {
    const { deps } = makeDeps(new AckPublisher());
    const broken = Buffer.from(
      JSON.stringify({ object: 'whatsapp_business_account', entry: Array.from({ length: 50 }, () => ({ changes: 'x' })) }),
    );
    const error = await httpErrorOf(acceptWhatsApp(deps, delivery(broken)));
    expect(error.code).toBe('BAD_REQUEST');
    expect((error.details as { issues: unknown[] }).issues).toHaveLength(20);
  });

  it('skips, counts and logs unreadable items (where and why, not what) and publishes the others with 200', async () => {
    const publisher = new AckPublisher();
    const { deps, logLines } = makeDeps(publisher);
    const payload = JSON.parse(BATCH.toString('utf8'));
    payload.entry[0].changes[0].value.messages[1] = { from: '4477', type: 'text', text: { body: 'private words' } };
    const raw = Buffer.from(JSON.stringify(payload));
    await expect(acceptWhatsApp(deps, delivery(raw))).resolves.toEqual({
      received: 7,
      published: 7,
      duplicates: 0,
      foreign: 1,
      invalid: 1,
      ignored: 0,
    });
    expect(await deps.metrics.registry.getSingleMetricAsString('igw_chat_items_skipped_total')).toMatch(
      /igw_chat_items_skipped_total\{provider="whatsapp",reason="invalid"\} 1$/m,
    );
    const log = logLines.join('');
    expect(log).toContain('"invalid":1');
    expect(log).toContain('["entry",0,"changes",0,"value","messages",1,"id"]');
    expect(log).not.toContain('private words');
    expect(log).not.toContain('4477');
  });

  it('answers 400 for a signed body that is not UTF-8', async () => {
    const { deps } = makeDeps(new AckPublisher());
    const error = await httpErrorOf(acceptWhatsApp(deps, delivery(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]))));
    expect(error.code).toBe('BAD_REQUEST');
    expect(error.reason).toBe('invalid_encoding');
  });

  it('drops __proto__ keys while parsing', async () => {
    const publisher = new AckPublisher();
    const { deps } = makeDeps(publisher);
    const raw = Buffer.from(
      BATCH.toString('utf8').replace('"text": { "body": "Hello, is anyone there?" }', '"text": { "body": "Hi", "__proto__": { "polluted": true } }'),
    );
    expect(raw.includes('__proto__')).toBe(true);
    await acceptWhatsApp(deps, delivery(raw));
    const first = JSON.parse(publisher.calls[0][0].value);
    expect(first.data.message.contentAttributes.text).toEqual({ body: 'Hi' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
