import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { signWhatsAppBody } from '../../src/channels/whatsapp/signature';
import { configSchema } from '../../src/config/schema';
import { HttpError } from '../../src/http/errors';
import { MemoryIdempotencyStore } from '../../src/idempotency/memory';
import type { ClaimResult } from '../../src/idempotency/store';
import { acceptWhatsApp, WHATSAPP_DEDUPE_WINDOW_MS, type WhatsAppDelivery } from '../../src/ingest/accept-whatsapp';
import type { IngestDeps, Publisher } from '../../src/ingest/ports';
import { createMetrics } from '../../src/observability/metrics';
import { PublishError } from '../../src/publish/errors';
import type { OutRecord } from '../../src/publish/sink';
import { toStoredChannel } from '../../src/registry/records';
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
});
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

function makeDeps(publisher: Publisher, env: Record<string, string> = {}, idempotency = new MemoryIdempotencyStore()) {
  const { logger, logLines } = loggerToLines();

  const deps: IngestDeps = { config: configSchema.parse(env), idempotency, publisher, logger, metrics: createMetrics() };
  return { deps, logLines, idempotency };
}

function delivery(raw: Buffer = BATCH, signature = signWhatsAppBody(raw, APP_SECRET)): WhatsAppDelivery {
  return { channelId: CHANNEL_ID, channel, raw, signature, requestId: 'req-1' };
}

async function httpErrorOf(promise: Promise<unknown>): Promise<HttpError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(HttpError);
  return error as HttpError;
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

  it('publishes every new event in one call on TOPIC_CHAT and completes each claim for 7 days', async () => {
    const publisher = new ManualPublisher();
    const { deps, idempotency } = makeDeps(publisher, { TOPIC_CHAT: 'chat.custom', PUBLISH_TIMEOUT_MS: '1234' });
    const complete = jest.spyOn(idempotency, 'complete');
    const pending = acceptWhatsApp(deps, delivery());
    await nextTick();
    expect(publisher.calls).toHaveLength(1);
    const [call] = publisher.calls;
    expect(call.timeoutMs).toBe(1234);
    expect(call.records).toHaveLength(8);
    expect(new Set(call.records.map((r) => r.topic))).toEqual(new Set(['chat.custom']));
    expect(complete).not.toHaveBeenCalled(); // nothing is remembered before the sink acknowledged

    call.resolve();
    await expect(pending).resolves.toEqual({ received: 8, published: 8, duplicates: 0, foreign: 1 });
    expect(complete).toHaveBeenCalledTimes(8);
    expect(complete.mock.calls.map((c) => c[0])).toContain(`wa:${CHANNEL_ID}:wamid.BATCH.OUT1:delivered`);
    for (const [, , response, ttl] of complete.mock.calls) {
      expect(ttl).toBe(WHATSAPP_DEDUPE_WINDOW_MS);
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
    expect(second.details).toEqual({ reason: 'in_flight', inFlight: 8 });
    expect(second.headers['Retry-After']).toMatch(/^\d+$/);
    expect(publisher.calls).toHaveLength(1); // the second published nothing

    publisher.calls[0].resolve();
    await expect(first).resolves.toMatchObject({ published: 8 });
    await expect(acceptWhatsApp(deps, delivery())).resolves.toMatchObject({ published: 0, duplicates: 8 });
    expect(publisher.calls).toHaveLength(1);
  });

  it('releases every claim when the sink fails, so the retry publishes all events', async () => {
    const publisher = new ManualPublisher();
    const { deps, idempotency } = makeDeps(publisher);
    const release = jest.spyOn(idempotency, 'release');
    const first = acceptWhatsApp(deps, delivery());
    await nextTick();
    publisher.calls[0].reject(new PublishError('timeout', 'sink did not acknowledge'));
    const error = await httpErrorOf(first);
    expect(error.code).toBe('SERVICE_UNAVAILABLE');
    expect(error.details).toEqual({ reason: 'timeout' });
    expect(release).toHaveBeenCalledTimes(8);

    const retry = acceptWhatsApp(deps, delivery());
    await nextTick();
    expect(publisher.calls[1].records).toHaveLength(8);
    publisher.calls[1].resolve();
    await expect(retry).resolves.toMatchObject({ published: 8, duplicates: 0 });
  });

  it('maps a record over the sink limit to 413 and releases the claims', async () => {
    const publisher = new ManualPublisher();
    const { deps, idempotency } = makeDeps(publisher);
    const pending = acceptWhatsApp(deps, delivery());
    await nextTick();
    publisher.calls[0].reject(new PublishError('too_large', 'record too large'));
    expect((await httpErrorOf(pending)).code).toBe('PAYLOAD_TOO_LARGE');
    await expect(idempotency.claim(`wa:${CHANNEL_ID}:wamid.BATCH.A1`, 'x', 1000)).resolves.toEqual({ state: 'claimed' });
  });

  it('publishes without dedupe when the store fails and IDEMPOTENCY_ON_STORE_ERROR=accept', async () => {
    const publisher = new AckPublisher();
    const { deps, idempotency } = makeDeps(publisher, { IDEMPOTENCY_ON_STORE_ERROR: 'accept' });
    jest.spyOn(idempotency, 'claim').mockRejectedValue(new Error('store down'));
    const complete = jest.spyOn(idempotency, 'complete');
    await expect(acceptWhatsApp(deps, delivery())).resolves.toMatchObject({ published: 8 });
    expect(publisher.calls[0]).toHaveLength(8);
    expect(complete).not.toHaveBeenCalled();
  });

  it('refuses with 503 and releases the claims it made when the store fails for one event (refuse mode)', async () => {
    const publisher = new AckPublisher();
    const { deps, idempotency } = makeDeps(publisher, { IDEMPOTENCY_ON_STORE_ERROR: 'refuse' });
    const realClaim = idempotency.claim.bind(idempotency);
    jest.spyOn(idempotency, 'claim').mockImplementation((key, hash, lease): Promise<ClaimResult> =>
      key.endsWith(':wamid.BATCH.A3') ? Promise.reject(new Error('store down')) : realClaim(key, hash, lease),
    );
    const release = jest.spyOn(idempotency, 'release');
    const error = await httpErrorOf(acceptWhatsApp(deps, delivery()));
    expect(error.code).toBe('SERVICE_UNAVAILABLE');
    expect(error.details).toEqual({ reason: 'store' });
    expect(publisher.calls).toHaveLength(0);
    expect(release).toHaveBeenCalledTimes(7);
  });

  it('counts and logs foreign changes without payload content', async () => {
    const { deps, logLines } = makeDeps(new AckPublisher());
    await acceptWhatsApp(deps, delivery());
    expect(await deps.metrics.registry.getSingleMetricAsString('igw_whatsapp_foreign_changes_total')).toMatch(
      /igw_whatsapp_foreign_changes_total 1$/m,
    );
    const log = logLines.join('');
    expect(log).toContain('"foreignChanges":1');
    expect(log).toContain('"channelId":"ch_unit"');
    expect(log).toContain('"reqId":"req-1"');
    expect(log).not.toContain('For the other number');
    expect(log).not.toContain('wamid');
  });

  it('reports at most 20 schema issues for a broken payload', async () => {
    const { deps } = makeDeps(new AckPublisher());
    const broken = Buffer.from(
      JSON.stringify({
        object: 'whatsapp_business_account',
        entry: [{ changes: Array.from({ length: 50 }, () => ({ value: { metadata: { phone_number_id: '1' }, messages: [{}] } })) }],
      }),
    );
    const error = await httpErrorOf(acceptWhatsApp(deps, delivery(broken)));
    expect(error.code).toBe('BAD_REQUEST');
    expect((error.details as { issues: unknown[] }).issues).toHaveLength(20);
  });

  it('answers 400 for a signed body that is not UTF-8', async () => {
    const { deps } = makeDeps(new AckPublisher());
    const error = await httpErrorOf(acceptWhatsApp(deps, delivery(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]))));
    expect(error.code).toBe('BAD_REQUEST');
    expect(error.details).toEqual({ reason: 'invalid_encoding' });
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
