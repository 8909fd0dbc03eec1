/**
 * The S3 file store against a real S3-protocol server over TCP (moto, started here): bytes
 * arrive exactly, and every way a put can end badly leaves neither an object nor an open
 * multipart upload behind.
 */
import { createHash, randomBytes } from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import { FileStoreError } from '../../src/files/file-store';
import { S3FileStore } from '../../src/files/s3';
import { createMetrics } from '../../src/observability/metrics';
import { S3TestServer, StoreOutageProxy, TEST_AWS_ENV } from '../helpers/s3-server';
import { silentLogger } from '../helpers/redis';

jest.setTimeout(60_000);

const MiB = 1024 * 1024;
let s3: S3TestServer;
let bucketSeq = 0;

beforeAll(async () => {
  Object.assign(process.env, TEST_AWS_ENV);
  s3 = await S3TestServer.start();
});
afterAll(async () => {
  await s3?.stop();
});

async function freshBucket(): Promise<string> {
  const bucket = `igw-store-${process.pid}-${++bucketSeq}`;
  await s3.createBucket(bucket);
  return bucket;
}

function store(bucket: string, endpoint = s3.endpoint, timeoutMs = 5000) {
  const metrics = createMetrics();
  const files = new S3FileStore({ bucket, prefix: 'p/', endpoint, region: 'us-east-1', forcePathStyle: true, timeoutMs, logger: silentLogger(), metrics });
  return { files, metrics };
}

/** `size` random bytes in 64 KiB chunks, and their sha256. */
function randomBody(size: number): { body: Readable; sha256: string } {
  const data = randomBytes(size);
  const chunks: Buffer[] = [];
  for (let at = 0; at < size; at += 64 * 1024) chunks.push(data.subarray(at, at + 64 * 1024));
  return { body: Readable.from(chunks), sha256: createHash('sha256').update(data).digest('hex') };
}

async function until(condition: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function leftovers(bucket: string): Promise<string[]> {
  return [...(await s3.keys(bucket)), ...(await s3.openUploads(bucket))];
}

describe('S3FileStore against moto', () => {
  it('stores a small body with one PutObject and a 12 MiB body as a multipart upload, byte for byte', async () => {
    const bucket = await freshBucket();
    const { files, metrics } = store(bucket);
    await files.start();
    const small = randomBody(100 * 1024);
    const large = randomBody(12 * MiB + 123);
    const a = await files.put('a/small.bin', small.body, { contentType: 'image/png', signal: new AbortController().signal });
    const b = await files.put('a/large.bin', large.body, { contentType: 'application/pdf', signal: new AbortController().signal });
    expect(a).toEqual({ url: `s3://${bucket}/p/a/small.bin`, key: 'p/a/small.bin' });
    expect(await s3.object(bucket, 'p/a/small.bin')).toEqual({ sha256: small.sha256, size: 100 * 1024, contentType: 'image/png' });
    expect(await s3.object(bucket, b.key)).toEqual({ sha256: large.sha256, size: 12 * MiB + 123, contentType: 'application/pdf' });
    expect(await s3.openUploads(bucket)).toEqual([]);
    expect((await metrics.registry.getSingleMetricAsString('igw_file_store_bytes_total'))).toContain(`igw_file_store_bytes_total ${12 * MiB + 123 + 100 * 1024}`);
    await files.discard([a.key, b.key]);
    expect(await leftovers(bucket)).toEqual([]);
    await files.close();
  });

  it('a body that fails half-way leaves no object and no open upload', async () => {
    const bucket = await freshBucket();
    const { files } = store(bucket);
    const body = new PassThrough();
    const put = files.put('broken.bin', body, { contentType: 'application/octet-stream', signal: new AbortController().signal });
    body.write(randomBytes(11 * MiB));
    await until(async () => (await s3.openUploads(bucket)).length === 1, 'the multipart upload to open');
    body.destroy(new Error('the sender went away'));
    await expect(put).rejects.toThrow('the sender went away');
    await until(async () => (await leftovers(bucket)).length === 0, 'the upload to be aborted');
    await files.close();
  });

  it('an aborted put rejects with the abort reason and leaves nothing', async () => {
    const bucket = await freshBucket();
    const { files } = store(bucket);
    const body = new PassThrough();
    const controller = new AbortController();
    const put = files.put('aborted.bin', body, { contentType: 'application/octet-stream', signal: controller.signal });
    body.write(randomBytes(6 * MiB));
    await until(async () => (await s3.openUploads(bucket)).length === 1, 'the multipart upload to open');
    controller.abort(new Error('413: the file is too large'));
    await expect(put).rejects.toThrow('413: the file is too large');
    await until(async () => (await leftovers(bucket)).length === 0, 'the upload to be aborted');
    await files.close();
  });

  it('a store that goes away mid-upload fails the put within its timeout; once back, the leftovers are cleaned', async () => {
    const bucket = await freshBucket();
    const proxy = await StoreOutageProxy.start(s3.port);
    const { files, metrics } = store(bucket, proxy.endpoint, 2000);
    const body = new PassThrough();
    const put = files.put('cut.bin', body, { contentType: 'application/octet-stream', signal: new AbortController().signal });
    body.write(randomBytes(11 * MiB));
    await until(async () => (await s3.openUploads(bucket)).length === 1, 'the multipart upload to open');
    proxy.goDown();
    body.write(randomBytes(6 * MiB));
    const started = Date.now();
    await expect(put).rejects.toBeInstanceOf(FileStoreError);
    expect(Date.now() - started).toBeLessThan(10_000);
    await expect(files.ping()).rejects.toThrow('s3:');
    expect(await s3.openUploads(bucket)).toHaveLength(1);
    await until(async () => (await metrics.registry.getSingleMetricAsString('igw_file_store_cleanup_pending')).endsWith(' 1'), 'the key to be queued');
    proxy.comeBack();
    await until(async () => (await leftovers(bucket)).length === 0, 'the background cleanup');
    await files.close();
    await proxy.close();
  });
});
