/**
 * Issue 22, item 3 (contract §12, the claim check): the built gateway with S3_BUCKET and a
 * 25 MiB MAX_BODY_BYTES, against moto over TCP. A body whose event is over MAX_RECORD_BYTES is
 * stored once as an object and the event carries its reference; a request not acknowledged
 * leaves no object.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { startGateway, type RunningGateway } from '../helpers/server';
import { S3TestServer, StoreOutageProxy, TEST_AWS_ENV } from '../helpers/s3-server';
import { tempDir, writeJson } from '../helpers/tmp';
import { waitUntil } from '../helpers/wait';

jest.setTimeout(120_000);

const MiB = 1024 * 1024;
const SECRET = `whsec_${Buffer.from('claim-check-test-secret-32-bytes').toString('base64')}`;
const TRIGGERS = {
  triggers: {
    signed: { workflowId: 'wf-big', workspaceId: 'ws-1', deployed: true, provider: { name: 'standard-webhooks', secrets: [SECRET] } },
    open: { workflowId: 'wf-open', workspaceId: 'ws-1', deployed: true },
  },
};

let s3: S3TestServer;
let bucketSeq = 0;
beforeAll(async () => {
  s3 = await S3TestServer.start();
});
afterAll(async () => {
  await s3?.stop();
});

interface Setup {
  gateway: RunningGateway;
  bucket: string;
  events(): any[];
  cleanup(): Promise<void>;
}

async function setup(env: Record<string, string> = {}, endpoint = s3.endpoint, prepare?: (eventsDir: string) => void): Promise<Setup> {
  const tmp = tempDir();
  const eventsDir = join(tmp.dir, 'events');
  prepare?.(eventsDir);
  const bucket = `igw-body-${process.pid}-${++bucketSeq}`;
  await s3.createBucket(bucket);
  const gateway = await startGateway({
    ...TEST_AWS_ENV,
    TRIGGERS_FILE: writeJson(tmp.dir, 'triggers.json', TRIGGERS),
    EVENTS_DIR: eventsDir,
    S3_BUCKET: bucket,
    S3_ENDPOINT: endpoint,
    S3_FORCE_PATH_STYLE: 'true',
    S3_PREFIX: 'in/',
    MAX_BODY_BYTES: String(25 * MiB),
    REQUEST_TIMEOUT_MS: '60000',
    SHUTDOWN_GRACE_MS: '90000',
    PUBLISH_TIMEOUT_MS: '20000',
    ...env,
  });
  const file = join(eventsDir, `${env.TOPIC_TRIGGERS ?? 'workflow.triggers'}.ndjson`);
  return {
    gateway,
    bucket,
    events: () => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line).value) : []),
    cleanup: async () => {
      await gateway.stop('SIGKILL');
      tmp.cleanup();
    },
  };
}

/** About `mb` MB of JSON whose bulk is outside `id`, `event` and `data` (what `common` takes). */
function largeBody(mb: number, id = 'evt_big_1'): string {
  const rows = Array.from({ length: Math.ceil((mb * 1_000_000) / 230) }, (_, i) => ({ i, name: `row ${i}`, pad: 'x'.repeat(200) }));
  return JSON.stringify({ type: 'export.ready', id, event: 'export.ready', rows });
}

function signed(body: string, msgId: string): Record<string, string> {
  const now = new Date();
  return {
    'content-type': 'application/json',
    'webhook-id': msgId,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': new StandardWebhook(SECRET).sign(msgId, now, body),
  };
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const post = (setup: Setup, path: string, body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
  fetch(`${setup.gateway.url}/api/webhooks/trigger/${path}`, { method: 'POST', headers, body });

async function expectEmpty(bucket: string): Promise<void> {
  await waitUntil(async () => (await s3.keys(bucket)).length === 0 && (await s3.openUploads(bucket)).length === 0, 'an empty bucket', 60_000);
  expect(await s3.keys(bucket)).toEqual([]);
  expect(await s3.openUploads(bucket)).toEqual([]);
}

describe('large bodies by reference (the claim check)', () => {
  it('a 20 MB signed JSON body is verified, stored byte for byte, and published by reference; its redelivery leaves one object', async () => {
    const own = await setup();
    try {
      const body = largeBody(20);
      expect(Buffer.byteLength(body)).toBeGreaterThan(20_000_000);
      const headers = signed(body, 'msg_big_1');
      const res = await post(own, 'signed', body, headers);
      expect(res.status).toBe(200);
      const eventId = res.headers.get('x-event-id') as string;
      const event = own.events().find((e) => e.id === eventId);
      const key = `in/ws-1/signed/${new Date(event.time).toISOString().slice(0, 10)}/${eventId}/body`;
      expect(event.data.input).toEqual({});
      expect(event.data.common).toEqual({ id: 'evt_big_1', event: 'export.ready' });
      expect(event.data.provider).toMatchObject({ name: 'standard-webhooks', deliveryId: 'msg_big_1', verified: true });
      expect(event.data.body).toEqual({
        type: 'url',
        data: `s3://${own.bucket}/${key}`,
        mime: 'application/json',
        size: Buffer.byteLength(body),
        sha256: sha256(body),
      });
      expect(await s3.object(own.bucket, key)).toEqual({ sha256: sha256(body), size: Buffer.byteLength(body), contentType: 'application/json' });

      // The provider's retry of the same delivery: answered from the key, nothing stored again.
      const retry = await post(own, 'signed', body, headers);
      expect(retry.status).toBe(200);
      expect(retry.headers.get('x-event-id')).toBe(eventId);
      expect(own.events()).toHaveLength(1);
      expect(await s3.keys(own.bucket)).toEqual([key]);

      // A forged signature over the same bytes: 401, nothing stored or published.
      const forged = await post(own, 'signed', body, { ...signed(body, 'msg_big_2'), 'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')}` });
      expect(forged.status).toBe(401);

      // A body whose event fits stays inline, as before.
      const small = await post(own, 'open', JSON.stringify({ id: 'small', n: 1 }));
      expect(small.status).toBe(200);
      const smallEvent = own.events().find((e) => e.id === small.headers.get('x-event-id'));
      expect(smallEvent.data.input).toEqual({ id: 'small', n: 1 });
      expect(smallEvent.data.body).toBeUndefined();
      expect(await s3.keys(own.bucket)).toEqual([key]);
    } finally {
      await own.cleanup();
    }
  });

  it('a sink that refuses the event (503) leaves no object behind', async () => {
    const refusing = await setup({ TOPIC_TRIGGERS: 'refused' }, s3.endpoint, (eventsDir) => {
      // The sink's file for the topic is a folder: every append fails.
      mkdirSync(join(eventsDir, 'refused.ndjson'), { recursive: true });
    });
    try {
      const res = await post(refusing, 'open', largeBody(5, 'evt_refused'));
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBeTruthy();
      expect(((await res.json()) as any).error.details.reason).toBe('sink_unavailable');
      await expectEmpty(refusing.bucket);
    } finally {
      await refusing.cleanup();
    }
  });

  it('the store unreachable: 503 with Retry-After, nothing published; once it is back the retry succeeds', async () => {
    const proxy = await StoreOutageProxy.start(s3.port);
    // The suite's generous store deadline: a store that is away fails its calls at once (the
    // proxy drops every connection), and a busy machine's moto may be slow with the retry.
    const own = await setup({}, proxy.endpoint);
    try {
      const body = largeBody(3, 'evt_outage');
      proxy.goDown();
      const down = await post(own, 'open', body, { 'content-type': 'application/json', 'idempotency-key': 'outage-1' });
      expect(down.status).toBe(503);
      expect(down.headers.get('retry-after')).toBeTruthy();
      expect(((await down.json()) as any).error.details.reason).toBe('file_store_unavailable');
      expect(own.events()).toEqual([]);

      proxy.comeBack();
      const retry = await post(own, 'open', body, { 'content-type': 'application/json', 'idempotency-key': 'outage-1' });
      expect(retry.status).toBe(200);
      expect(own.events()).toHaveLength(1);
      expect(await s3.keys(own.bucket)).toHaveLength(1);
    } finally {
      await own.cleanup();
      await proxy.close();
    }
  });
});
