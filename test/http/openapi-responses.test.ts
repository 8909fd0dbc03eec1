import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import type { z } from 'zod';
import { createAdminApp } from '../../src/app';
import { configSchema } from '../../src/config/schema';
import { createContainer } from '../../src/container';
import { REASONS, type Reason } from '../../src/outcomes/reasons';
import { createLogger } from '../../src/observability/logger';
import { OPERATION_REASONS, openApiDocument } from '../../src/routes/openapi-document';
import {
  chatAckSchema,
  dataOf,
  deletedSchema,
  errorSchema,
  healthSchema,
  pageOf,
  channelSchema,
  providerEntrySchema,
  readySchema,
  triggerSchema,
  webhookAckSchema,
} from '../../src/openapi/schemas';
import { ADMIN_TOKEN, testApp } from '../helpers/app';
import { tempDir } from '../helpers/tmp';

/**
 * The response schemas of the OpenAPI document are checked against what the routes really
 * send: every body below is parsed with the (strict) schema the document was generated from,
 * so a field added to or removed from an answer fails here until the document says so.
 */
const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
const TELEGRAM_SECRET = 'telegram-secret_token-for-openapi';

function conforms<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new Error(`the answer does not match the documented schema: ${parsed.error.message}\n${JSON.stringify(body)}`);
  return parsed.data;
}

/** An error answer: the documented envelope, with a reason the operation documents. */
function documentedError(operationId: string, body: unknown): Reason {
  const error = conforms(errorSchema, body).error;
  // A code with one reason only (404, 405, 403…) may leave details out: the code names it.
  const soleReason = () => (Object.keys(REASONS) as Reason[]).filter((r) => REASONS[r].code === error.code);
  const reason = Array.isArray(error.details) ? 'invalid_schema' : (error.details?.reason ?? soleReason()[0]);
  expect(OPERATION_REASONS[operationId]).toContain(reason);
  return reason as Reason;
}

describe('answers match the OpenAPI document', () => {
  const t = testApp();

  it('triggers: PUT, GET, the list, DELETE', async () => {
    const input = {
      workflowId: 'wf-doc',
      workspaceId: 'ws-doc',
      deployed: true,
      auth: { token: 'doc-token-123456', header: 'X-Doc-Token' },
      publishHeaders: ['X-Shop-Topic'],
      inputFormat: [{ name: 'n', type: 'number' }],
      response: { status: 202, body: { ok: true, list: [1, 'a', null] } },
      rateLimit: { limit: 10, windowSeconds: 60 },
      idempotency: { keyField: 'id', ttlSeconds: 60, fingerprintTtlSeconds: 30 },
      provider: { name: 'github', secrets: ['gh-secret-1'], events: ['push'] },
    };
    const put = await request(t.admin).put('/admin/triggers/doc-trigger').set(admin).send(input);
    expect(put.status).toBe(200);
    const stored = conforms(dataOf(triggerSchema), put.body).data;
    expect(stored.auth).toEqual({ header: 'X-Doc-Token', tokenSet: true });

    conforms(dataOf(triggerSchema), (await request(t.admin).get('/admin/triggers/doc-trigger').set(admin)).body);
    conforms(pageOf(triggerSchema), (await request(t.admin).get('/admin/triggers?limit=10').set(admin)).body);
    conforms(deletedSchema('path'), (await request(t.admin).delete('/admin/triggers/doc-trigger').set(admin)).body.data);

    const unknownKey = await request(t.admin).put('/admin/triggers/doc-trigger').set(admin).send({ ...input, extra: 1 });
    expect(unknownKey.status).toBe(400);
    expect(documentedError('putTrigger', unknownKey.body)).toBe('invalid_schema');
    const missing = await request(t.admin).get('/admin/triggers/doc-trigger').set(admin);
    expect(documentedError('getTrigger', missing.body)).toBe('not_found');
    const badLimit = await request(t.admin).get('/admin/triggers?limit=0').set(admin);
    expect(documentedError('listTriggers', badLimit.body)).toBe('invalid_parameter');
    const noToken = await request(t.admin).get('/admin/triggers');
    expect(documentedError('listTriggers', noToken.body)).toBe('credentials_invalid');
  });

  it('channels of every provider: PUT, GET, the list, DELETE', async () => {
    const inputs = {
      'doc-wa': { provider: 'whatsapp', workspaceId: 'ws', inboxId: 'in', phoneNumberId: '123', verifyToken: 'v', appSecret: 's' },
      'doc-tw': { provider: 'twilio', workspaceId: 'ws', inboxId: 'in', accountSid: `AC${'a'.repeat(32)}`, authToken: 't' },
      'doc-tg': { provider: 'telegram', workspaceId: 'ws', inboxId: 'in', botId: '42', secretToken: TELEGRAM_SECRET },
    };
    for (const [id, input] of Object.entries(inputs)) {
      const put = await request(t.admin).put(`/admin/channels/${id}`).set(admin).send(input);
      expect(put.status).toBe(200);
      expect(conforms(dataOf(channelSchema), put.body).data.provider).toBe(input.provider);
      conforms(dataOf(channelSchema), (await request(t.admin).get(`/admin/channels/${id}`).set(admin)).body);
    }
    expect(conforms(pageOf(channelSchema), (await request(t.admin).get('/admin/channels').set(admin)).body).data).toHaveLength(3);
    conforms(deletedSchema('channelId'), (await request(t.admin).delete('/admin/channels/doc-wa').set(admin)).body.data);
  });

  it('the provider catalogue', async () => {
    const list = conforms(pageOf(providerEntrySchema).pick({ data: true }), (await request(t.admin).get('/admin/providers').set(admin)).body);
    const documented = (openApiDocument() as any).paths['/admin/providers/{name}'].parameters[0].schema.enum;
    expect(list.data.map((entry) => entry.name)).toEqual(documented);
    conforms(dataOf(providerEntrySchema), (await request(t.admin).get('/admin/providers/stripe').set(admin)).body);
    expect(documentedError('getProvider', (await request(t.admin).get('/admin/providers/nope').set(admin)).body)).toBe('not_found');
  });

  it('a webhook acknowledgement and its errors', async () => {
    await request(t.admin).put('/admin/triggers/doc-hook').set(admin).send({ workflowId: 'wf', workspaceId: 'ws', deployed: true });
    const ack = await request(t.app).post('/api/webhooks/trigger/doc-hook').send({ a: 1 });
    expect(ack.status).toBe(200);
    expect(conforms(webhookAckSchema, ack.body).eventId).toBe(ack.headers['x-event-id']);
    const badJson = await request(t.app).post('/api/webhooks/trigger/doc-hook').set('Content-Type', 'application/json').send('{');
    expect(documentedError('triggerWebhook', badJson.body)).toBe('invalid_json');
    const wrongType = await request(t.app).post('/api/webhooks/trigger/doc-hook').set('Content-Type', 'application/xml').send('<a/>');
    expect(documentedError('triggerWebhook', wrongType.body)).toBe('unsupported_media_type');
    const get = await request(t.app).get('/api/webhooks/trigger/doc-hook');
    expect(documentedError('answerTriggerHandshake', get.body)).toBe('method_not_allowed');
  });

  it('a chat acknowledgement', async () => {
    await request(t.admin).put('/admin/channels/doc-tg2').set(admin).send({ provider: 'telegram', workspaceId: 'ws', inboxId: 'in', secretToken: TELEGRAM_SECRET });
    const update = readFileSync(join(__dirname, '..', 'fixtures', 'telegram', 'text.json'), 'utf8');
    const res = await request(t.app)
      .post('/api/channels/telegram/doc-tg2')
      .set('Content-Type', 'application/json')
      .set('X-Telegram-Bot-Api-Secret-Token', TELEGRAM_SECRET)
      .send(update);
    expect(res.status).toBe(200);
    expect(conforms(chatAckSchema, res.body).published).toBe(1);
    const unsigned = await request(t.app).post('/api/channels/telegram/doc-tg2').set('Content-Type', 'application/json').send(update);
    expect(documentedError('receiveTelegram', unsigned.body)).toBe('signature_missing');
  });

  it('health, readiness, metrics and the document itself', async () => {
    conforms(healthSchema, (await request(t.app).get('/healthz')).body);
    conforms(readySchema, (await request(t.admin).get('/readyz')).body);
    const metrics = await request(t.admin).get('/metrics');
    expect(metrics.headers['content-type']).toMatch(/^text\/plain/);
    const served = await request(t.admin).get('/openapi.json');
    expect(served.status).toBe(200);
    expect(served.headers['content-type']).toMatch(/^application\/json/);
    expect(served.body).toEqual(openApiDocument());
  });

  it('readiness of the real container (embedded mode: the file sink reports its kind)', async () => {
    const tmp = tempDir('igw-openapi-ready-');
    const container = createContainer(configSchema.parse({ EVENTS_DIR: tmp.dir }), createLogger('silent'));
    try {
      await container.start();
      const res = await request(createAdminApp(container.deps)).get('/readyz');
      expect(res.status).toBe(200);
      expect(conforms(readySchema, res.body)).toEqual({ status: 'ready', checks: { sink: 'up' }, details: { sink: { kind: 'file' } } });
    } finally {
      await container.close();
      tmp.cleanup();
    }
  });

  it('readiness: what the body says of dependencies that are down or short of up, and the 503 before the start and while draining', async () => {
    const r = testApp();
    r.deps.checks.splice(0, r.deps.checks.length,
      { name: 'redis', ping: () => Promise.reject(new Error('redis: not connected (reconnecting)')) },
      {
        name: 'sink',
        ping: () => Promise.resolve(),
        report: () => ({ state: 'topic_missing', detail: { kind: 'kafka', topics: { 'workflow.triggers': 'present', 'chat.inbound': 'missing' } } }),
      },
      { name: 'triggers-file', ping: () => Promise.reject(new Error('TRIGGERS_FILE not applied yet')) },
    );
    const degraded = await request(r.admin).get('/readyz');
    expect(degraded.status).toBe(200);
    const ready = conforms(readySchema, degraded.body);
    expect(ready.checks).toEqual({ redis: 'down', sink: 'topic_missing', 'triggers-file': 'down' });
    expect(ready.details?.sink?.topics).toEqual({ 'workflow.triggers': 'present', 'chat.inbound': 'missing' });

    for (const [state, reason] of [['starting', 'starting'], ['draining', 'closed']] as const) {
      r.deps.lifecycle.started = state !== 'starting';
      r.deps.lifecycle.draining = state === 'draining';
      const notReady = await request(r.admin).get('/readyz');
      expect(notReady.status).toBe(503);
      expect(documentedError('ready', notReady.body)).toBe(reason);
      const { reason: _reason, status, ...report } = notReady.body.error.details;
      expect(status).toBe(state);
      conforms(readySchema, { status: 'ready', ...report });
    }
  });

  it('the ingress gate and the admin API: auth_throttled, body_too_complex', async () => {
    const g = testApp({ AUTH_FAILURE_LIMIT: '1/60', MAX_INFLIGHT_BODY_BYTES: '65536', MAX_INFLIGHT_BODY_SHARE: '100' });
    await request(g.admin).put('/admin/triggers/doc-gate').set(admin).send({ workflowId: 'wf', workspaceId: 'ws', deployed: true, auth: { token: 'doc-gate-token-1234' } });
    await request(g.admin).put('/admin/triggers/doc-open').set(admin).send({ workflowId: 'wf', workspaceId: 'ws', deployed: true });
    const hook = (token: string) => request(g.app).post('/api/webhooks/trigger/doc-gate').set('Authorization', `Bearer ${token}`);
    expect(documentedError('triggerWebhook', (await hook('wrong').send({ a: 1 })).body)).toBe('credentials_invalid');
    expect(documentedError('triggerWebhook', (await hook('wrong').send({ a: 1 })).body)).toBe('auth_throttled');
    const wrongAdmin = { Authorization: 'Bearer wrong-admin-token' };
    expect(documentedError('listTriggers', (await request(g.admin).get('/admin/triggers').set(wrongAdmin)).body)).toBe('credentials_invalid');
    expect(documentedError('listProviders', (await request(g.admin).get('/admin/providers').set(wrongAdmin)).body)).toBe('auth_throttled');

    const emptyObjects = `[${Array(10_000).fill('{}').join(',')}]`;
    const complex = await request(g.app).post('/api/webhooks/trigger/doc-open').set('Content-Type', 'application/json').send(emptyObjects);
    expect(documentedError('triggerWebhook', complex.body)).toBe('body_too_complex');
  });
});
