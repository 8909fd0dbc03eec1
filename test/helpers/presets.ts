/**
 * The five cases every signature preset must pass (contract §10, §10.1 A.4, issue 36), written
 * once: a genuine delivery is published with the preset's kind and delivery id; one signed byte
 * changed is 401 signature_invalid; no signature is 401 signature_missing; a stale signed
 * timestamp is 401 timestamp_out_of_tolerance; the same delivery again, and the provider's own
 * redelivery (same id, new timestamp or attempt), are 2xx with nothing published (never 409).
 *
 * Triggers are registered through the admin API, as an operator does. Each preset's file signs
 * deliveries with the provider's official library (or as its docs say, after the official
 * verifier accepted the signing in a plain unit test of the same file).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { ADMIN_TOKEN, testApp } from './app';
import { expectError, hookUrl, triggerInput } from './http';

export const adminAuth = { Authorization: `Bearer ${ADMIN_TOKEN}` };
/** The public origin of tests whose provider signs the URL it called (`{url}` recipes). */
export const PUBLIC_BASE_URL = 'https://hooks.example.com';
export const publicUrl = (path: string, query = '') => `${PUBLIC_BASE_URL}${hookUrl(path)}${query}`;
export const nowSeconds = () => Math.floor(Date.now() / 1000);

/** A published example payload, compact (test/fixtures/providers/<name>/<file>; sources in SOURCES.md). */
export function examplePayload(provider: string, file: string): string {
  const text = readFileSync(join(__dirname, '..', 'fixtures', 'providers', provider, file), 'utf8');
  return JSON.stringify(JSON.parse(text));
}

export type TestApp = ReturnType<typeof testApp>;

/** One request as the provider sends it. */
export interface Delivery {
  body: string;
  headers: Record<string, string>;
  /** Default application/json. */
  contentType?: string;
}

export interface PresetSpec {
  /** The trigger's `provider` object as an operator PUTs it. */
  provider: Record<string, unknown>;
  env?: Record<string, string>;
  /** The published example payload. */
  body: string;
  /** Signs `body` as the provider does at `at` (unix seconds; the preset converts to its unit). */
  sign: (body: string, at: number) => Delivery | Promise<Delivery>;
  /** The official verifier (or, where there is none, the documented check) on a signed delivery. */
  accepts: (delivery: Delivery) => boolean | Promise<boolean>;
  /**
   * What data.provider must say of the genuine delivery. Without `deliveryId` (a provider that
   * sends no id, deduped by the body claim of §5) the key must be there, a string or null.
   */
  expected: { name: string; kind: string; deliveryId?: unknown };
  /** Headers that carry the signature (removed for the signature_missing case, never published). */
  signatureHeaders: string[];
  /** Default 200. */
  ackStatus?: number;
  /** The tolerance a stale timestamp exceeds; absent when the scheme signs no timestamp. */
  toleranceSeconds?: number;
  /** The provider's own redelivery of the same event (a changed attempt counter); default the same body, signed anew. */
  redeliveryBody?: string;
  /** For schemes without a signed timestamp: the same body under another unsigned id header is still a replay. */
  otherIdHeader?: Record<string, string>;
}

export async function putTrigger(t: TestApp, path: string, provider: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return request(t.admin).put(`/admin/triggers/${path}`).set(adminAuth).send(triggerInput({ provider, ...extra } as never));
}

/** Registers the trigger and fails with the gateway's answer when it is refused. */
export async function registerTrigger(t: TestApp, path: string, provider: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const res = await putTrigger(t, path, provider, extra);
  if (res.status !== 200) throw new Error(`PUT /admin/triggers/${path} answered ${res.status}: ${res.text}`);
  return res;
}

export function deliver(t: TestApp, path: string, delivery: Delivery, query = '') {
  return request(t.app)
    .post(`${hookUrl(path)}${query}`)
    .set('Content-Type', delivery.contentType ?? 'application/json')
    .set(delivery.headers)
    .send(delivery.body);
}

/** The body with one byte changed: its last letter or digit becomes another of the same class (still valid JSON). */
export function changeOneByte(body: string): string {
  for (let i = body.length - 1; i >= 0; i--) {
    const c = body[i];
    if (/[0-9]/.test(c)) return body.slice(0, i) + (c === '7' ? '8' : '7') + body.slice(i + 1);
    if (/[a-z]/.test(c)) return body.slice(0, i) + (c === 'q' ? 'r' : 'q') + body.slice(i + 1);
    if (/[A-Z]/.test(c)) return body.slice(0, i) + (c === 'Q' ? 'R' : 'Q') + body.slice(i + 1);
  }
  throw new Error('no letter or digit to change');
}

export function withoutHeaders(delivery: Delivery, names: string[]): Delivery {
  const drop = new Set(names.map((n) => n.toLowerCase()));
  return { ...delivery, headers: Object.fromEntries(Object.entries(delivery.headers).filter(([k]) => !drop.has(k.toLowerCase()))) };
}

export const eventOf = (record: { value: string }) => JSON.parse(record.value);

/** The unit test that makes the HTTP cases' signing trustworthy: the provider's verifier accepts it, and refuses a changed byte. */
export function describeSigning(title: string, spec: Pick<PresetSpec, 'body' | 'sign' | 'accepts'>) {
  it(`${title}: the provider's verifier (its official library, else its documented check) accepts our signing, and refuses one changed byte`, async () => {
    const signed = await spec.sign(spec.body, nowSeconds());
    expect(await spec.accepts(signed)).toBe(true);
    expect(await spec.accepts({ ...signed, body: changeOneByte(signed.body) })).toBe(false);
  });
}

/** The five cases on a trigger of `spec.provider`, registered through the admin API. */
export function describePreset(title: string, path: string, spec: PresetSpec) {
  describe(`${title} preset (contract §10.1)`, () => {
    describeSigning(title, spec);
    describe('through the gateway', () => gatewayCases(path, spec));
  });
}

function gatewayCases(path: string, spec: PresetSpec) {
  const t = testApp(spec.env ?? {});
  const ack = spec.ackStatus ?? 200;
  beforeAll(() => registerTrigger(t, path, spec.provider));

  it('publishes a genuine delivery with the preset\'s kind and delivery id, and not its signature headers', async () => {
    const genuine = await spec.sign(spec.body, nowSeconds() - 30);
    const res = await deliver(t, path, genuine);
    expect(res.status).toBe(ack);
    expect(t.sink.records).toHaveLength(1);
    const event = eventOf(t.sink.records[0]);
    expect(event.data.provider).toMatchObject({ ...spec.expected, verified: true, authenticates: 'body' });
    if (!('deliveryId' in spec.expected)) expect(['string', 'object']).toContain(typeof event.data.provider.deliveryId);
    for (const name of spec.signatureHeaders) expect(event.data.headers).not.toHaveProperty(name.toLowerCase());
    for (const secret of (spec.provider.secrets as string[] | undefined) ?? []) {
      expect(JSON.stringify(t.sink.records)).not.toContain(secret);
      expect(t.logLines.join('\n')).not.toContain(secret);
    }

    const replay = await deliver(t, path, genuine);
    expect(replay.status).toBe(ack);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.headers['x-event-id']).toBe(res.headers['x-event-id']);
    expect(t.sink.records).toHaveLength(1);
  });

  it('answers the provider\'s redelivery (same id, new signature) 2xx and publishes nothing again, never 409', async () => {
    // Publish (or replay) the original here, so this case does not depend on the one before it.
    const original = await deliver(t, path, await spec.sign(spec.body, nowSeconds() - 30));
    expect(original.status).toBe(ack);
    const before = t.sink.records.length;
    expect(before).toBeGreaterThanOrEqual(1);
    const redelivery = await spec.sign(spec.redeliveryBody ?? spec.body, nowSeconds());
    const res = await deliver(t, path, { ...redelivery, headers: { ...redelivery.headers, ...spec.otherIdHeader } });
    expect(res.status).toBe(ack);
    expect(t.sink.records).toHaveLength(before);
  });

  it('refuses 401 signature_invalid a delivery with one signed byte changed', async () => {
    const genuine = await spec.sign(spec.body, nowSeconds());
    const before = t.sink.records.length;
    const res = await deliver(t, path, { ...genuine, body: changeOneByte(genuine.body) });
    expect(expectError(res, 'UNAUTHORIZED').details).toMatchObject({ reason: 'signature_invalid' });
    expect(t.sink.records).toHaveLength(before);
  });

  it('refuses 401 signature_missing a delivery without its signature', async () => {
    const genuine = await spec.sign(spec.body, nowSeconds());
    const before = t.sink.records.length;
    const res = await deliver(t, path, withoutHeaders(genuine, spec.signatureHeaders));
    expect(expectError(res, 'UNAUTHORIZED').details).toMatchObject({ reason: 'signature_missing' });
    expect(t.sink.records).toHaveLength(before);
  });

  if (spec.toleranceSeconds !== undefined) {
    const tolerance = spec.toleranceSeconds;
    it(`refuses 401 timestamp_out_of_tolerance a genuine signature ${tolerance + 60} s old`, async () => {
      const stale = await spec.sign(spec.body, nowSeconds() - tolerance - 60);
      const before = t.sink.records.length;
      const res = await deliver(t, path, stale);
      expect(expectError(res, 'UNAUTHORIZED').details).toMatchObject({ reason: 'timestamp_out_of_tolerance' });
      expect(t.sink.records).toHaveLength(before);
    });

    // §10: the tolerance applies in both directions (a clock far ahead proves nothing fresh).
    it(`refuses 401 timestamp_out_of_tolerance a genuine signature dated ${tolerance + 60} s ahead`, async () => {
      const ahead = await spec.sign(spec.body, nowSeconds() + tolerance + 60);
      const before = t.sink.records.length;
      const res = await deliver(t, path, ahead);
      expect(expectError(res, 'UNAUTHORIZED').details).toMatchObject({ reason: 'timestamp_out_of_tolerance' });
      expect(t.sink.records).toHaveLength(before);
    });
  }
}
