/**
 * Contract §12 (the claim check, and streamed file parts): a publish that timed out while the
 * sink held its batch may still be acknowledged after the 503. The objects then stay (the
 * lifecycle rule ages them out) rather than leave a published event pointing at nothing; those
 * of a publish the sink refused go.
 */
import { Readable } from 'node:stream';
import { batcherOptions } from '../../src/container';
import { configSchema } from '../../src/config/schema';
import { S3FileStore } from '../../src/files/s3';
import { MemoryIdempotencyStore } from '../../src/idempotency/memory';
import { acceptUpload } from '../../src/ingest/accept-upload';
import { acceptWebhook } from '../../src/ingest/accept-webhook';
import { BodyBudget } from '../../src/ingest/body-budget';
import { createMetrics } from '../../src/observability/metrics';
import { MicroBatcher } from '../../src/publish/batcher';
import { toStoredTrigger } from '../../src/registry/records';
import { CaptureSink } from '../helpers/capture-sink';
import { silentLogger } from '../helpers/redis';
import { S3TestServer, TEST_AWS_ENV } from '../helpers/s3-server';
import { waitUntil } from '../helpers/wait';

jest.setTimeout(60_000);

let s3: S3TestServer;
beforeAll(async () => {
  Object.assign(process.env, TEST_AWS_ENV);
  s3 = await S3TestServer.start();
});
afterAll(async () => {
  await s3?.stop();
});

function gateway(bucket: string) {
  const config = configSchema.parse({ PUBLISH_TIMEOUT_MS: '200', MAX_RECORD_BYTES: '1024', S3_BUCKET: bucket });
  const metrics = createMetrics();
  const logger = silentLogger();
  const sink = new CaptureSink();
  const files = new S3FileStore({ bucket, prefix: 'in/', endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, timeoutMs: 5000, logger, metrics });
  const deps = {
    config,
    metrics,
    logger,
    files,
    sink,
    idempotency: new MemoryIdempotencyStore({ maxKeys: 1000, maxBytes: 1024 * 1024 }),
    publisher: new MicroBatcher(sink, batcherOptions(config)),
  };
  return deps;
}

const trigger = toStoredTrigger({ workflowId: 'wf-kept', workspaceId: 'ws-1', deployed: true });
const post = (deps: ReturnType<typeof gateway>, id: string) =>
  acceptWebhook(deps, {
    path: 'kept',
    trigger,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    query: {},
    raw: Buffer.from(JSON.stringify({ id, rows: 'x'.repeat(5000) })),
  });

it('a publish timeout while the sink holds the batch keeps the body object; a refusal deletes it', async () => {
  const bucket = `igw-kept-${process.pid}`;
  await s3.createBucket(bucket);
  const deps = gateway(bucket);

  deps.sink.mode = 'hang'; // takes the batch, never answers within PUBLISH_TIMEOUT_MS
  await expect(post(deps, 'held')).rejects.toMatchObject({ reason: 'timeout' });
  expect(deps.sink.hungWrites).toBe(1);
  const [kept] = await s3.keys(bucket);
  expect(kept).toMatch(/^in\/ws-1\/kept\/.+\/body$/);
  expect((await deps.metrics.fileObjectsKept.get()).values[0]?.value).toBe(1);

  // A refusal's object is deleted: once it is gone, a deletion of the first would be done too.
  deps.sink.giveUpHungWrites();
  deps.sink.mode = 'fail';
  await expect(post(deps, 'refused')).rejects.toMatchObject({ reason: 'sink_unavailable' });
  await waitUntil(async () => (await s3.keys(bucket)).length <= 1, 'the refused request\'s object deleted');
  expect(await s3.keys(bucket)).toEqual([kept]);
  expect((await deps.metrics.fileObjectsKept.get()).values[0]?.value).toBe(1);
});

it('a streamed file part of a request whose publish timed out in the sink stays; one the sink refused goes', async () => {
  const bucket = `igw-kept-up-${process.pid}`;
  await s3.createBucket(bucket);
  const deps = gateway(bucket);
  const boundary = 'kept-boundary';
  const upload = (name: string) =>
    acceptUpload(deps, {
      path: 'kept',
      trigger,
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      query: {},
      memory: new BodyBudget(64 * 1024 * 1024).lease([`route:${name}`], 64 * 1024 * 1024),
      body: Readable.from([
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="doc"; filename="${name}.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`),
        Buffer.alloc(200_000, 7), // over INLINE_FILE_MAX_BYTES: stored as an object
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]),
    });

  deps.sink.mode = 'hang';
  await expect(upload('held')).rejects.toMatchObject({ reason: 'timeout' });
  const [kept] = await s3.keys(bucket);
  expect(kept).toMatch(/held\.bin$/);
  expect((await deps.metrics.fileObjectsKept.get()).values[0]?.value).toBe(1);

  deps.sink.giveUpHungWrites();
  deps.sink.mode = 'fail';
  await expect(upload('refused')).rejects.toMatchObject({ reason: 'sink_unavailable' });
  await waitUntil(async () => !(await s3.keys(bucket)).some((key) => key.endsWith('refused.bin')), "the refused request's object deleted");
  expect(await s3.keys(bucket)).toEqual([kept]);
});
