/**
 * Contract §13.1: "Keys a sender chooses never collide with keys the gateway derives": an
 * `Idempotency-Key` (or a keyField value) lives apart from fingerprints and provider delivery
 * ids, so no sender can pre-claim another's delivery (issue 34 item 6). Run on the memory store
 * and on the real Redis (127.0.0.1:6379, a unique prefix).
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { FileStore } from '../../src/files/file-store';
import request from 'supertest';
import { MemoryIdempotencyStore } from '../../src/idempotency/memory';
import { RedisIdempotencyStore } from '../../src/idempotency/redis';
import type { IdempotencyStore } from '../../src/idempotency/store';
import { multipartIdentity } from '../../src/ingest/body-identity';
import { triggerStoreKey } from '../../src/ingest/idempotency-key';
import type { RedisConnection } from '../../src/redis/connection';
import { toStoredTrigger } from '../../src/registry/records';
import { testApp } from '../helpers/app';
import { hookUrl, triggerInput } from '../helpers/http';
import { uniquePrefix } from '../helpers/redis';
import { redisSetups } from '../helpers/redis-setups';

const [singleRedis] = redisSetups();
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** What anyone can work out from a body they expect someone else to send (contract §5's fingerprint). */
function predictedFingerprint(path: string, raw: string): string {
  return `fp:${sha256(`POST\n${path}\n[]\napplication/json\n${sha256(raw)}`)}`;
}

const BOUNDARY = 'sender-keys-boundary';
const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`;

/** A multipart body with one text part and one small file (kept inline: the store is never called). */
function multipartBody(note: string): string {
  return [
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="note"\r\n\r\n${note}\r\n`,
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="doc"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nfile bytes\r\n`,
    `--${BOUNDARY}--\r\n`,
  ].join('');
}

/** A multipart body's fingerprint, as anyone can work it out (its identity does not depend on the boundary). */
async function predictedMultipartFingerprint(path: string, raw: string): Promise<string> {
  const limits = { maxFileBytes: 1_000_000, maxFiles: 10, maxFields: 100, maxFieldBytes: 1_000_000, maxBodyBytes: 10_000_000 };
  const identity = await multipartIdentity(Readable.from([Buffer.from(raw)]), MULTIPART, limits);
  return `fp:${sha256(`POST\n${path}\n[]\nmultipart/form-data\n${identity}`)}`;
}

/** With a file store configured, multipart requests take the streaming upload path (contract §12). */
const inlineOnlyFiles: FileStore = {
  name: 'inline-only',
  bufferBytes: 0,
  start: async () => undefined,
  ping: async () => undefined,
  close: async () => undefined,
  put: () => Promise.reject(new Error('these tests keep their files inline')),
  discard: async () => undefined,
};

interface Store {
  idempotency: IdempotencyStore;
  close(): Promise<void>;
}

const stores: Array<[string, () => Promise<Store>]> = [
  ['memory', async () => ({ idempotency: new MemoryIdempotencyStore({ maxKeys: 10_000 }), close: async () => undefined })],
  [
    'redis',
    async () => {
      const prefix = uniquePrefix('sender-keys');
      const connection: RedisConnection = await singleRedis.connect();
      const idempotency = new RedisIdempotencyStore(connection.client, prefix);
      await idempotency.start();
      return {
        idempotency,
        close: async () => {
          await idempotency.close();
          await connection.close();
          await singleRedis.deleteKeys(prefix);
        },
      };
    },
  ],
];

describe.each(stores)('a sender cannot pre-claim another delivery (%s store)', (_name, open) => {
  let store: Store;
  let t: ReturnType<typeof testApp>;
  let n = 0;
  beforeAll(async () => {
    store = await open();
    t = testApp({}, { idempotency: store.idempotency });
    Object.assign(t.deps, { files: inlineOnlyFiles });
  });
  afterAll(() => store.close());

  const eventsOn = (path: string) => t.sink.events().filter((e) => e.data.triggerPath === path);
  const post = (path: string, raw: string, key?: string) => {
    const req = request(t.app).post(hookUrl(path)).set('Content-Type', 'application/json');
    return (key === undefined ? req : req.set('Idempotency-Key', key)).send(raw);
  };

  it("Idempotency-Key: fp:<the fingerprint of another's body> does not take that delivery: the keyless delivery is published", async () => {
    const path = `pre-claim-${++n}`;
    await t.addTrigger(path, triggerInput());
    const victim = JSON.stringify({ order: 42, amount: '10.00' });
    const fingerprint = predictedFingerprint(path, victim);

    const attack = await post(path, JSON.stringify({ order: 42, amount: '0.01' }), fingerprint);
    expect(attack.status).toBe(200);

    const real = await post(path, victim);
    expect(real.status).toBe(200);
    expect(real.headers['idempotent-replayed']).toBeUndefined();
    expect(real.headers['x-event-id']).not.toBe(attack.headers['x-event-id']);
    const published = eventsOn(path);
    expect(published.map((e) => e.data.input)).toEqual([
      { order: 42, amount: '0.01' },
      { order: 42, amount: '10.00' },
    ]);
    // The prediction was right: the real delivery's key is the one the attacker sent, as published.
    expect(published.map((e) => e.data.idempotencyKey)).toEqual([fingerprint, fingerprint]);

    // Each key still dedupes its own: the real delivery's retry and the attacker's are replays.
    const retry = await post(path, victim);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.headers['x-event-id']).toBe(real.headers['x-event-id']);
    const again = await post(path, JSON.stringify({ order: 42, amount: '0.01' }), fingerprint);
    expect(again.headers['x-event-id']).toBe(attack.headers['x-event-id']);
    expect(eventsOn(path)).toHaveLength(2);
  });

  it('the same on the upload path (multipart with a file store): the keyless upload is published', async () => {
    const path = `pre-claim-upload-${++n}`;
    await t.addTrigger(path, triggerInput());
    const victim = multipartBody('the real one');
    const fingerprint = await predictedMultipartFingerprint(path, victim);
    const upload = (raw: string, key?: string) => {
      const req = request(t.app).post(hookUrl(path)).set('Content-Type', MULTIPART);
      return (key === undefined ? req : req.set('Idempotency-Key', key)).send(raw);
    };

    expect((await upload(multipartBody('the attacker'), fingerprint)).status).toBe(200);
    const real = await upload(victim);
    expect(real.status).toBe(200);
    expect(real.headers['idempotent-replayed']).toBeUndefined();
    const published = eventsOn(path);
    expect(published.map((e) => e.data.input.note)).toEqual(['the attacker', 'the real one']);
    expect(published.map((e) => e.data.idempotencyKey)).toEqual([fingerprint, fingerprint]);

    // A fingerprint held by a record of the old layout is not this upload's either.
    const other = multipartBody('another real one');
    const oldKey = triggerStoreKey(toStoredTrigger(triggerInput()), path, { value: await predictedMultipartFingerprint(path, other), explicit: true });
    expect((await store.idempotency.claim(oldKey, 'old-pod', 'body-not-read-yet', 60_000)).state).toBe('claimed');
    const next = await upload(other);
    expect(next.status).toBe(200);
    expect(eventsOn(path).map((e) => e.data.input.note)).toEqual(['the attacker', 'the real one', 'another real one']);
  });

  it('a keyField value fp:<hex> does not take the fingerprint of a body without that field', async () => {
    const path = `pre-claim-field-${++n}`;
    await t.addTrigger(path, triggerInput({ idempotency: { keyField: 'id' } }));
    const victim = JSON.stringify({ order: 7 });
    const attack = await post(path, JSON.stringify({ id: predictedFingerprint(path, victim), order: 0 }));
    expect(attack.status).toBe(200);

    const real = await post(path, victim);
    expect(real.status).toBe(200);
    expect(real.headers['idempotent-replayed']).toBeUndefined();
    expect(eventsOn(path).map((e) => e.data.input)).toEqual([{ id: predictedFingerprint(path, victim), order: 0 }, { order: 7 }]);
  });

  it("an Idempotency-Key naming a provider's next delivery id (Telegram's update_id counts up) does not take it", async () => {
    const path = `pre-claim-provider-${++n}`;
    const secret = `tg-secret-${n}`;
    const update = { update_id: 10_001, message: { message_id: 1366, date: 1441645532, chat: { id: 1111111, type: 'private' }, text: '/start' } };
    // Before the trigger is switched to its provider (updated in place: it keeps its keys), the next update_id is claimed.
    await t.addTrigger(path, triggerInput());
    expect((await post(path, JSON.stringify({ harmless: true }), String(update.update_id))).status).toBe(200);

    await t.addTrigger(path, triggerInput({ provider: { name: 'telegram', secrets: [secret] } }));
    const real = await request(t.app)
      .post(hookUrl(path))
      .set('Content-Type', 'application/json')
      .set('X-Telegram-Bot-Api-Secret-Token', secret)
      .send(JSON.stringify(update));
    expect(real.status).toBe(200);
    const published = eventsOn(path);
    expect(published).toHaveLength(2);
    expect(published[1].data.input).toEqual(update);
    expect(published[1].data.idempotencyKey).toBe('10001');
  });

  it('a fingerprint pre-claimed under the old layout (t:…:fp:<hex> holding another body) does not swallow the delivery', async () => {
    // What a pod of the previous release wrote for `Idempotency-Key: fp:<hex>`, or what it left before the upgrade.
    const path = `old-layout-${++n}`;
    await t.addTrigger(path, triggerInput());
    const victim = JSON.stringify({ order: 99 });
    const oldKey = triggerStoreKey(toStoredTrigger(triggerInput()), path, { value: predictedFingerprint(path, victim), explicit: true });
    expect(oldKey.startsWith('t:')).toBe(true);
    expect((await store.idempotency.claim(oldKey, 'old-pod', sha256('{"evil":1}'), 60_000)).state).toBe('claimed');
    expect(await store.idempotency.complete(oldKey, 'old-pod', sha256('{"evil":1}'), { status: 200, eventId: 'attackers-event' }, 60_000)).toBe(true);

    const real = await post(path, victim);
    expect(real.status).toBe(200);
    expect(real.headers['idempotent-replayed']).toBeUndefined();
    expect(real.headers['x-event-id']).not.toBe('attackers-event');
    expect(eventsOn(path).map((e) => e.data.input)).toEqual([{ order: 99 }]);
  });

  it("a sender's key claimed under the old layout is not found under the new one: its retry is published again, with the same idempotencyKey", async () => {
    const path = `old-sender-key-${++n}`;
    await t.addTrigger(path, triggerInput());
    const raw = JSON.stringify({ order: 5 });
    const oldKey = `${triggerStoreKey(toStoredTrigger(triggerInput()), path, { value: 'order-5', explicit: true })}`;
    expect((await store.idempotency.claim(oldKey, 'old-pod', sha256(raw), 60_000)).state).toBe('claimed');
    expect(await store.idempotency.complete(oldKey, 'old-pod', sha256(raw), { status: 200, eventId: 'first-event' }, 60_000)).toBe(true);

    const retry = await post(path, raw, 'order-5');
    expect(retry.status).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(eventsOn(path).map((e) => e.data.idempotencyKey)).toEqual(['order-5']);
    // From then on the new layout dedupes it.
    expect((await post(path, raw, 'order-5')).headers['idempotent-replayed']).toBe('true');
  });
});
