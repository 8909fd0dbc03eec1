/**
 * Contract §12 end to end: the built gateway (dist/main.js) with S3_BUCKET set, against a
 * real S3-protocol server over TCP (moto, started here), events in the file sink.
 */
import { randomBytes, createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { readySchema } from '../../src/openapi/schemas';
import { startGateway, type RunningGateway } from '../helpers/server';
import { postMultipartStream, type Part } from '../helpers/multipart-stream';
import { S3TestServer, StoreOutageProxy, TEST_AWS_ENV } from '../helpers/s3-server';
import { tempDir, writeJson } from '../helpers/tmp';

jest.setTimeout(180_000);

const MB = 1_000_000;
const ADMIN = 'admin-token-s3-uploads';
const MiB = 1024 * 1024;
const FIFTY_MB = 50 * MB;
let bucketSeq = 0;

let s3: S3TestServer;
let big: Buffer;
let bigSha256: string;

beforeAll(async () => {
  s3 = await S3TestServer.start();
  big = randomBytes(FIFTY_MB);
  bigSha256 = createHash('sha256').update(big).digest('hex');
});
afterAll(async () => {
  await s3?.stop();
});

interface Setup {
  gateway: RunningGateway;
  bucket: string;
  eventsFile: string;
  cleanup(): Promise<void>;
}

const TRIGGERS = {
  triggers: {
    uploads: { workflowId: 'wf-up', workspaceId: 'ws-1', deployed: true },
    typed: { workflowId: 'wf-typed', workspaceId: 'ws-1', deployed: true, inputFormat: [{ name: 'count', type: 'number' }] },
  },
};

async function setup(env: Record<string, string> = {}, endpoint = s3.endpoint, prepare?: (eventsDir: string) => void): Promise<Setup> {
  const tmp = tempDir();
  prepare?.(join(tmp.dir, 'events'));
  const bucket = `igw-up-${process.pid}-${++bucketSeq}`;
  await s3.createBucket(bucket);
  const gateway = await startGateway({
    ...TEST_AWS_ENV,
    TRIGGERS_FILE: writeJson(tmp.dir, 'triggers.json', TRIGGERS),
    EVENTS_DIR: join(tmp.dir, 'events'),
    S3_BUCKET: bucket,
    S3_ENDPOINT: endpoint,
    S3_FORCE_PATH_STYLE: 'true',
    S3_PREFIX: 'in/',
    ADMIN_TOKEN: ADMIN,
    MAX_FILE_BYTES: String(64 * MiB),
    MAX_INFLIGHT_BODY_BYTES: String(256 * MiB),
    // Ten 50 MB uploads into moto on a busy machine take a while (read where the request timeout is a setting).
    REQUEST_TIMEOUT_MS: '120000',
    SHUTDOWN_GRACE_MS: '150000',
    // Each store call may take this long: moto on a CPU shared with the rest of the suite is slow.
    PUBLISH_TIMEOUT_MS: '40000',
    ...env,
  });
  return {
    gateway,
    bucket,
    eventsFile: join(tmp.dir, 'events', `${env.TOPIC_TRIGGERS ?? 'workflow.triggers'}.ndjson`),
    cleanup: async () => {
      await gateway.stop('SIGKILL');
      tmp.cleanup();
    },
  };
}

function events(file: string): any[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line).value);
}

function bigFile(name = 'doc', filename = 'report 2024.pdf'): Part {
  return { name, filename, mime: 'application/pdf', source: big, size: FIFTY_MB };
}

async function until(condition: () => Promise<boolean> | boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The bucket holds no object and no open multipart upload. */
async function expectEmpty(bucket: string): Promise<void> {
  await until(async () => (await s3.keys(bucket)).length === 0 && (await s3.openUploads(bucket)).length === 0, 'an empty bucket');
  expect(await s3.keys(bucket)).toEqual([]);
  expect(await s3.openUploads(bucket)).toEqual([]);
}

const url = (setup: Setup, path = 'uploads') => `${setup.gateway.url}/api/webhooks/trigger/${path}`;

describe('files by reference: the built gateway with S3_BUCKET', () => {
  let main: Setup;
  beforeAll(async () => {
    main = await setup();
  });
  afterAll(async () => {
    await main?.cleanup();
  });

  it('stores a 50 MB file part byte for byte and publishes its s3:// URL; a small file stays inline', async () => {
    const small = randomBytes(10 * 1024);
    const res = await postMultipartStream(url(main), [
      { name: 'subject', value: 'quarterly report' },
      bigFile(),
      { name: 'thumb', filename: 'thumb.png', mime: 'image/png', source: small, size: small.length },
    ]);
    expect(res.status).toBe(200);
    const eventId = res.headers['x-event-id'] as string;
    const event = events(main.eventsFile).find((e) => e.id === eventId);
    const day = new Date().toISOString().slice(0, 10);
    const key = `in/ws-1/uploads/${day}/${eventId}/1-report_2024.pdf`;
    expect(event.data.input).toEqual({
      subject: 'quarterly report',
      doc: { type: 'url', data: `s3://${main.bucket}/${key}`, name: 'report 2024.pdf', mime: 'application/pdf', size: FIFTY_MB, sha256: bigSha256 },
      thumb: { type: 'file', name: 'thumb.png', mime: 'image/png', size: small.length, data: `data:image/png;base64,${small.toString('base64')}` },
    });
    expect(await s3.object(main.bucket, key)).toEqual({ sha256: bigSha256, size: FIFTY_MB, contentType: 'application/pdf' });
    expect(await s3.openUploads(main.bucket)).toEqual([]);

    // As the OpenAPI document describes it.
    const ready = readySchema.parse(await (await fetch(`${main.gateway.adminUrl}/readyz`)).json());
    expect(ready.checks.s3).toBe('up');
    const metrics = await (await fetch(`${main.gateway.adminUrl}/metrics`)).text();
    expect(metrics).toContain(`igw_file_store_bytes_total ${FIFTY_MB}`);
    expect(metrics).toContain('igw_file_store_objects_total{op="stored"} 1');
    expect(metrics).toMatch(/igw_file_store_upload_seconds_count 1\b/);

    // The delivery log counts the streamed body's bytes (contract §13), headers and parts included.
    let entry: { bytes: number; idempotencyKey?: string } | undefined;
    await until(async () => {
      const res = await fetch(`${main.gateway.adminUrl}/admin/triggers/uploads/deliveries`, { headers: { Authorization: `Bearer ${ADMIN}` } });
      const page = (await res.json()) as { data?: Array<{ eventId?: string; bytes: number; idempotencyKey?: string }> };
      entry = page.data?.find((e) => e.eventId === eventId);
      return entry !== undefined;
    }, 'the delivery log entry');
    expect(entry!.bytes).toBeGreaterThan(FIFTY_MB + small.length);
    expect(entry!.idempotencyKey).toBe(event.data.idempotencyKey);
  });

  it('an empty multipart body is {} as without a file store (contract §2.4), with or without a boundary', async () => {
    for (const contentType of ['multipart/form-data; boundary=XX', 'multipart/form-data']) {
      const res = await fetch(url(main), { method: 'POST', headers: { 'Content-Type': contentType }, body: '' });
      expect(res.status).toBe(200);
      const { eventId } = (await res.json()) as { eventId: string };
      await until(() => events(main.eventsFile).some((event) => event.id === eventId), `event ${eventId}`);
      expect(events(main.eventsFile).find((event) => event.id === eventId).data.input).toEqual({});
    }
  });

  it('six concurrent 30 MB uploads from one client all succeed under the default body budget, peak RSS under 300 MiB', async () => {
    // Issue 22, item 2: the default MAX_INFLIGHT_BODY_BYTES (32 MiB) and share (50 %). Each upload
    // holds only its part buffers, counted as they fill and given back as they are sent: the
    // uploads queue for memory instead of being refused 429 body_share_exceeded.
    const own = await setup({ MAX_INFLIGHT_BODY_BYTES: String(32 * MiB) });
    try {
      const uploads = 6;
      const size = 30 * MB;
      const sha256 = createHash('sha256').update(big.subarray(0, size)).digest('hex');
      const pid = own.gateway.child.pid as number;
      const status = () => readFileSync(`/proc/${pid}/status`, 'utf8');
      const kB = (field: string) => Number(status().match(new RegExp(`${field}:\\s+(\\d+) kB`))?.[1]) * 1024;
      const before = kB('VmRSS');
      const responses = await Promise.all(
        Array.from({ length: uploads }, (_, i) =>
          postMultipartStream(url(own), [{ name: 'n', value: String(i) }, { name: 'doc', filename: `f${i}.bin`, mime: 'application/pdf', source: big, size }]),
        ),
      );
      // The listener's peak resident memory over its whole life (the kernel's high-water mark).
      const peak = kB('VmHWM');
      // The error bodies say why, should one of them not be 200.
      expect(responses.map((r) => (r.status === 200 ? 200 : { status: r.status, body: r.body }))).toEqual(Array(uploads).fill(200));
      const all = events(own.eventsFile);
      for (const res of responses) {
        const event = all.find((e) => e.id === res.headers['x-event-id']);
        const key = (event.data.input.doc.data as string).replace(`s3://${own.bucket}/`, '');
        expect(await s3.object(own.bucket, key)).toMatchObject({ sha256, size });
      }
      process.stdout.write(`${uploads} x 30 MB at once from one client: gateway RSS ${(before / MiB).toFixed(0)} MiB before, peak ${(peak / MiB).toFixed(0)} MiB\n`);
      expect(peak).toBeLessThan(300 * MiB);
    } finally {
      await own.cleanup();
    }
  });

  it('413 in the middle of a file: the part already uploaded is aborted, the bucket stays empty', async () => {
    const tight = await setup({ MAX_FILE_BYTES: String(20 * MB) });
    try {
      const res = await postMultipartStream(url(tight), [{ name: 'a', value: 'x' }, bigFile()]);
      expect(res.status).toBe(413);
      expect(res.body.error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', details: { reason: 'file_too_large' } });
      expect(events(tight.eventsFile)).toEqual([]);
      await expectEmpty(tight.bucket);
    } finally {
      await tight.cleanup();
    }
  });

  it('a 400 after the files were stored (inputFormat) deletes them', async () => {
    const own = await setup();
    try {
      const res = await postMultipartStream(url(own, 'typed'), [{ name: 'count', value: 'many' }, bigFile()]);
      expect(res.status).toBe(400);
      expect(res.body.error.details.reason).toBe('invalid_field');
      await expectEmpty(own.bucket);
    } finally {
      await own.cleanup();
    }
  });

  it('a retry (new boundary, as curl -F sends it) uploads nothing when its key is in the headers, and leaves nothing when it is found after the body', async () => {
    const proxy = await StoreOutageProxy.start(s3.port);
    const own = await setup({}, proxy.endpoint);
    try {
      const headers = { 'idempotency-key': 'upload-1' };
      const boundary = '----igw-test-replayed-boundary';
      const first = await postMultipartStream(url(own), [bigFile()], { headers, boundary });
      expect(first.status).toBe(200);
      const stored = await s3.keys(own.bucket);
      expect(stored).toHaveLength(1);

      let replaySent = 0;
      const storedBytes = proxy.bytesUp;
      // Another boundary: other bytes, the same parts (contract §5: the body's identity).
      const replay = await postMultipartStream(url(own), [bigFile()], { headers, beforeSlice: (sent) => void (replaySent = sent) });
      expect(replay.status).toBe(200);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.headers['x-event-id']).toBe(first.headers['x-event-id']);
      expect(replaySent).toBeGreaterThan(FIFTY_MB - 128 * 1024);
      // The whole body was read (its parts hashed: same body, so a replay), and not a byte of it stored.
      expect(proxy.bytesUp - storedBytes).toBeLessThan(64 * 1024);
      expect(await s3.keys(own.bucket)).toEqual(stored);
      expect(await s3.openUploads(own.bucket)).toEqual([]);

      const other = await postMultipartStream(url(own), [bigFile('doc', 'other.pdf')], { headers });
      expect(other.status).toBe(409);
      expect(other.body.error.details.reason).toBe('key_reused');
      expect(await s3.keys(own.bucket)).toEqual(stored);

      // No key in the headers: the body's fingerprint is known only once it is read (and stored).
      const parts: Part[] = [{ name: 'same', value: 'body' }, bigFile('doc', 'fp.pdf')];
      const a = await postMultipartStream(url(own), parts, { boundary: '----igw-test-first-attempt' });
      expect(a.status).toBe(200);
      const afterFirst = await s3.keys(own.bucket);
      expect(afterFirst).toHaveLength(2);
      const b = await postMultipartStream(url(own), parts, { boundary: '----igw-test-second-attempt' });
      expect(b.status).toBe(200);
      expect(b.headers['idempotent-replayed']).toBe('true');
      expect(b.headers['x-event-id']).toBe(a.headers['x-event-id']);
      await until(async () => (await s3.keys(own.bucket)).length === 2, 'the duplicate\'s object to be deleted');
      expect(await s3.keys(own.bucket)).toEqual(afterFirst);
      expect(await s3.openUploads(own.bucket)).toEqual([]);
      expect(events(own.eventsFile)).toHaveLength(2);
    } finally {
      await own.cleanup();
      await proxy.close();
    }
  });

  it('a sender that disconnects mid-file leaves nothing behind, and the gateway keeps serving', async () => {
    const own = await setup();
    try {
      const boundary = '----igw-test-gone';
      const req = request(url(own), { method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } });
      req.on('error', () => undefined);
      req.write(`--${boundary}\r\nContent-Disposition: form-data; name="doc"; filename="a.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
      for (let at = 0; at < 20 * MB; at += 1024 * 1024) {
        if (!req.write(big.subarray(at, at + 1024 * 1024))) await new Promise((resolve) => req.once('drain', resolve));
      }
      await until(async () => (await s3.openUploads(own.bucket)).length === 1, 'the multipart upload to open');
      req.destroy();
      await expectEmpty(own.bucket);
      const after = await postMultipartStream(url(own), [{ name: 'still', value: 'serving' }]);
      expect(after.status).toBe(200);
    } finally {
      await own.cleanup();
    }
  });

  it('a sink that refuses the event (503) leaves no object behind, and nothing is published', async () => {
    const refusing = await setup({ TOPIC_TRIGGERS: 'refused' }, s3.endpoint, (eventsDir) => {
      // The sink's file for the topic is a folder: every append fails.
      mkdirSync(join(eventsDir, 'refused.ndjson'), { recursive: true });
    });
    try {
      const res = await postMultipartStream(url(refusing), [bigFile()], { headers: { 'idempotency-key': 'refused-1' } });
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toBeDefined();
      expect(res.body.error.details.reason).toBe('sink_unavailable');
      await expectEmpty(refusing.bucket);
    } finally {
      await refusing.cleanup();
    }
  });

  it('the store going away mid-upload: 503 with Retry-After; once it is back the retry succeeds and only its objects remain', async () => {
    const proxy = await StoreOutageProxy.start(s3.port);
    // The store's calls get the suite's generous deadline: on a busy machine moto may take
    // more than a few seconds to assemble the retry's 50 MB, and a call that times out is a 503.
    // A store that is away fails its calls at once (the proxy drops every connection).
    const own = await setup({}, proxy.endpoint);
    try {
      const headers = { 'idempotency-key': 'outage-1' };
      const boundary = '----igw-test-outage-boundary';
      let wentDown = false;
      const cut = await postMultipartStream(url(own), [{ name: 'k', value: 'v' }, bigFile()], {
        headers,
        boundary,
        beforeSlice: async (sent) => {
          if (wentDown || sent < 20 * MB) return;
          // Two parts are in the store: an open multipart upload to leave behind.
          await until(async () => (await s3.openUploads(own.bucket)).length === 1, 'the multipart upload to open');
          proxy.goDown();
          wentDown = true;
        },
      });
      expect(cut.status).toBe(503);
      expect(cut.headers['retry-after']).toBeDefined();
      expect(cut.body.error.details.reason).toBe('file_store_unavailable');
      expect(events(own.eventsFile)).toEqual([]);
      // The gateway could not abort it while the store was away.
      expect(await s3.openUploads(own.bucket)).toHaveLength(1);

      proxy.comeBack();
      const retry = await postMultipartStream(url(own), [{ name: 'k', value: 'v' }, bigFile()], { headers, boundary });
      expect(retry.status).toBe(200);
      const published = events(own.eventsFile);
      expect(published).toHaveLength(1);
      const key = (published[0].data.input.doc.data as string).replace(`s3://${own.bucket}/`, '');
      await until(async () => (await s3.openUploads(own.bucket)).length === 0, 'the cut upload to be aborted in the background');
      expect(await s3.keys(own.bucket)).toEqual([key]);
      expect(await s3.object(own.bucket, key)).toMatchObject({ sha256: bigSha256, size: FIFTY_MB });
    } finally {
      await own.cleanup();
      await proxy.close();
    }
  });
});
