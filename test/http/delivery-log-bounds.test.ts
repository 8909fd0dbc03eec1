import { createHmac } from 'node:crypto';
import request from 'supertest';
import { ADMIN_TOKEN, testApp } from '../helpers/app';
import { hookUrl, triggerInput, TRIGGER_TOKEN } from '../helpers/http';
import { waitUntil } from '../helpers/wait';

/**
 * Contract §13.1, embedded mode (the Redis mode: test/integration/delivery-log-redis.test.ts):
 * entries are small whatever the sender sends, the log belongs to one registration, strangers'
 * refusals cannot push out the record, and a cursor the log never gave out is a 400.
 */
type App = ReturnType<typeof testApp>;
const auth = { Authorization: `Bearer ${ADMIN_TOKEN}` };
/** What a sender chose and the log must never keep whole: 20 property names of 48,000 characters. */
const HUGE_NAME = 48_000;
const BODY_VALUE = 'a-value-of-the-body-never-logged';
const hostileBody = () => Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`${i}-`.padEnd(HUGE_NAME, 'k'), BODY_VALUE]));
const mapSchema = { type: 'object', additionalProperties: { type: 'number' } };

async function logOf(t: App, path: string, query = '?limit=500', kind: 'triggers' | 'channels' = 'triggers') {
  const res = await request(t.admin).get(`/admin/${kind}/${path}/deliveries${query}`).set(auth);
  expect(res.status).toBe(200);
  return res.body as { data: Array<Record<string, any>>; nextCursor: string | null };
}

async function entryOf(t: App, path: string, requestId: string) {
  let found: Record<string, any> | undefined;
  await waitUntil(async () => {
    found = (await logOf(t, path)).data.find((e) => e.requestId === requestId);
    return found !== undefined;
  }, `the log entry of ${requestId}`);
  return found!;
}

describe('log entries are small (contract §13.1)', () => {
  const t = testApp();
  beforeAll(async () => {
    await t.addTrigger('mapped', triggerInput({ schema: mapSchema }));
  });

  it('keeps a hostile schema refusal (20 property names of 48,000 characters) under 4 KiB, paths cut to 256, no value of the body', async () => {
    const res = await request(t.app).post(hookUrl('mapped')).send(hostileBody());
    expect(res.status).toBe(400);
    expect(res.body.error.details.reason).toBe('schema_invalid');
    const entry = await entryOf(t, 'mapped', res.headers['x-request-id']);
    expect(Buffer.byteLength(JSON.stringify(entry))).toBeLessThanOrEqual(4096);
    expect(entry).toMatchObject({ status: 400, reason: 'schema_invalid' });
    const errors = entry.diagnostics.errors as Array<{ instancePath: string; keyword: string }>;
    expect(errors.length).toBeGreaterThan(0);
    for (const error of errors) {
      expect(error.instancePath.length).toBeLessThanOrEqual(256);
      expect(error.instancePath.startsWith('/')).toBe(true);
      expect(error.keyword).toBe('type');
    }
    expect(JSON.stringify(entry)).not.toContain(BODY_VALUE);
  });

  it('keeps a header value the sender chose (a 12,000-character forwarded address) under 4 KiB, cut to 256', async () => {
    const proxied = testApp({ TRUST_PROXY: '1' });
    await proxied.addTrigger('open', triggerInput());
    const res = await request(proxied.app).post(hookUrl('open')).set('X-Forwarded-For', 'f'.repeat(12_000)).send({ n: 1 });
    expect(res.status).toBe(200);
    const entry = await entryOf(proxied, 'open', res.headers['x-request-id']);
    expect(Buffer.byteLength(JSON.stringify(entry))).toBeLessThanOrEqual(4096);
    expect(entry.clientIp).toBe('f'.repeat(256));
  });
});

describe('the log belongs to one registration (contract §13.1)', () => {
  const t = testApp();
  const admin = (method: 'put' | 'delete', path: string, body?: object) => request(t.admin)[method](path).set(auth).send(body);
  const post = (path: string) => request(t.app).post(hookUrl(path)).send({ n: 1 });

  it('a trigger deleted and registered again (for another workspace) starts with an empty log; an update keeps it', async () => {
    expect((await admin('put', '/admin/triggers/reused', triggerInput({ workspaceId: 'ws-old' }))).status).toBe(200);
    const old = await post('reused');
    await entryOf(t, 'reused', old.headers['x-request-id']);
    // An update (a new workflow) is the same registration: its log stays.
    expect((await admin('put', '/admin/triggers/reused', triggerInput({ workspaceId: 'ws-old', workflowId: 'wf-2' }))).status).toBe(200);
    expect((await logOf(t, 'reused')).data.map((e) => e.requestId)).toEqual([old.headers['x-request-id']]);

    expect((await admin('delete', '/admin/triggers/reused')).status).toBe(200);
    expect((await admin('put', '/admin/triggers/reused', triggerInput({ workspaceId: 'ws-new' }))).status).toBe(200);
    expect(await logOf(t, 'reused')).toEqual({ data: [], nextCursor: null });
    const fresh = await post('reused');
    await entryOf(t, 'reused', fresh.headers['x-request-id']);
    expect((await logOf(t, 'reused')).data.map((e) => e.requestId)).toEqual([fresh.headers['x-request-id']]);
  });

  it('a channel deleted and registered again starts with an empty log', async () => {
    const channel = { provider: 'telegram', workspaceId: 'ws-old', inboxId: 'in-1', secretToken: 'reused-channel-secret-1' };
    expect((await admin('put', '/admin/channels/reused-tg', channel)).status).toBe(200);
    const old = await request(t.app).post('/api/channels/telegram/reused-tg').set('X-Telegram-Bot-Api-Secret-Token', 'wrong').send({ update_id: 1 });
    expect(old.status).toBe(401);
    await waitUntil(async () => (await logOf(t, 'reused-tg', '', 'channels')).data.length === 1, 'the old entry');

    expect((await admin('delete', '/admin/channels/reused-tg')).status).toBe(200);
    expect((await admin('put', '/admin/channels/reused-tg', { ...channel, workspaceId: 'ws-new' })).status).toBe(200);
    expect(await logOf(t, 'reused-tg', '', 'channels')).toEqual({ data: [], nextCursor: null });
  });
});

describe('refused strangers cannot push out the record (contract §13.1)', () => {
  it('160 unauthenticated refusals leave the accepted deliveries before them readable', async () => {
    const t = testApp();
    await t.addTrigger('flooded', triggerInput({ auth: { token: TRIGGER_TOKEN } }));
    const accepted: string[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await request(t.app).post(hookUrl('flooded')).set('Authorization', `Bearer ${TRIGGER_TOKEN}`).send({ i });
      expect(res.status).toBe(200);
      accepted.push(res.headers['x-request-id']);
    }
    const refused = await Promise.all(
      Array.from({ length: 160 }, () => request(t.app).post(hookUrl('flooded')).set('Authorization', 'Bearer not-the-token').send({})),
    );
    // Wrong tokens, then (the client failed too often) throttled: all strangers' refusals.
    expect(refused.filter((r) => r.status !== 401 && r.status !== 429)).toEqual([]);
    const lastRefused = refused.map((r) => r.headers['x-request-id']);
    await waitUntil(async () => (await logOf(t, 'flooded')).data.length === 10 + 25, 'both shares full');
    const shown = (await logOf(t, 'flooded')).data;
    expect(shown.filter((e) => e.status === 200).map((e) => e.requestId)).toEqual([...accepted].reverse());
    // The unauthenticated share keeps the last DELIVERY_LOG_MAX / 4 of them.
    const strangers = shown.filter((e) => e.status !== 200);
    expect(strangers).toHaveLength(25);
    for (const entry of strangers) expect(lastRefused).toContain(entry.requestId);
  });

  // A handshake anyone may ask for (Dropbox's GET ?challenge=, Graph's POST ?validationToken=) proves no
  // credential: answered 200, it must not evict the signed deliveries either (it evicted all 10).
  it.each([
    ['dropbox GET ?challenge=', 'dropbox', (app: App['app']) => request(app).get(`${hookUrl('hs')}?challenge=c`)],
    ['microsoft-graph POST ?validationToken=', 'microsoft-graph', (app: App['app']) => request(app).post(`${hookUrl('hs')}?validationToken=v`).send({})],
  ])('%s answered to strangers leaves the accepted deliveries readable', async (_name, provider, handshake) => {
    const t = testApp({ DELIVERY_LOG_MAX: '20', RATE_LIMIT_DEFAULT: '100000/60' });
    await t.addTrigger('hs', triggerInput({ provider: { name: provider, secrets: ['the-secret'] } }));
    const accepted: string[] = [];
    for (let i = 0; i < 10; i++) {
      const delivery =
        provider === 'dropbox'
          ? (() => {
              const body = JSON.stringify({ list_folder: { accounts: [`dbid:${i}`] }, delta: { users: [i] } });
              const signature = createHmac('sha256', 'the-secret').update(body).digest('hex');
              return request(t.app).post(hookUrl('hs')).set('Content-Type', 'application/json').set('X-Dropbox-Signature', signature).send(body);
            })()
          : request(t.app)
              .post(hookUrl('hs'))
              .send({ value: [{ clientState: 'the-secret', subscriptionId: 's', changeType: 'created', resource: `r/${i}` }] });
      const res = await delivery;
      expect(res.status).toBeLessThan(300);
      accepted.push(res.headers['x-request-id']);
    }
    const answered: string[] = [];
    for (let i = 0; i < 40; i++) {
      const res = await handshake(t.app);
      expect(res.status).toBe(200);
      answered.push(res.headers['x-request-id']);
    }
    await waitUntil(async () => (await logOf(t, 'hs')).data.some((e) => e.requestId === answered[answered.length - 1]), 'the last handshake logged');
    const shown = (await logOf(t, 'hs')).data;
    expect(shown.filter((e) => accepted.includes(e.requestId)).map((e) => e.requestId)).toEqual([...accepted].reverse());
    // The handshakes are logged, in the strangers' share (DELIVERY_LOG_MAX / 4).
    expect(shown.filter((e) => answered.includes(e.requestId))).toHaveLength(5);
  });
});

describe('cursors (contract §13.1)', () => {
  it('answers 400 for a malformed, 0-0 or out-of-range cursor', async () => {
    const t = testApp();
    await t.addTrigger('paged', triggerInput());
    for (let i = 0; i < 3; i++) expect((await request(t.app).post(hookUrl('paged')).send({ i })).status).toBe(200);
    await waitUntil(async () => (await logOf(t, 'paged')).data.length === 3, 'three entries');
    const first = await logOf(t, 'paged', '?limit=1');
    expect(first.nextCursor).not.toBeNull();
    expect((await logOf(t, 'paged', `?limit=5&cursor=${first.nextCursor}`)).data).toHaveLength(2);
    for (const cursor of ['0-0', '0', '99999999999999999999-0', '999999999999999', 'not a cursor']) {
      const res = await request(t.admin).get(`/admin/triggers/paged/deliveries?cursor=${Buffer.from(cursor).toString('base64url')}`).set(auth);
      expect([cursor, res.status, res.body.error?.code]).toEqual([cursor, 400, 'BAD_REQUEST']);
    }
  });
});
