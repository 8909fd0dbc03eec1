/** The streaming multipart parser with an in-memory destination (the S3 store has its own integration tests). */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { Refusal } from '../../src/outcomes/refusal';
import { bodyIdentity } from '../../src/ingest/body-identity';
import { parseBody } from '../../src/ingest/parse-body';
import { streamMultipart, type FileDestination, type StreamingLimits } from '../../src/ingest/stream-multipart';

const BOUNDARY = 'unit-boundary';
const CONTENT_TYPE = `multipart/form-data; boundary=${BOUNDARY}`;

function body(parts: Array<{ name: string; value?: string; filename?: string; data?: Buffer }>): Buffer {
  const pieces: Buffer[] = [];
  for (const part of parts) {
    const disposition = part.filename !== undefined ? `; filename="${part.filename}"` : '';
    const type = part.data ? '\r\nContent-Type: application/octet-stream' : '';
    pieces.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${part.name}"${disposition}${type}\r\n\r\n`));
    pieces.push(part.data ?? Buffer.from(part.value ?? ''));
    pieces.push(Buffer.from('\r\n'));
  }
  pieces.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(pieces);
}

/** Chunks of 1 KiB, like a socket. */
const stream = (raw: Buffer) => Readable.from(Array.from({ length: Math.ceil(raw.length / 1024) }, (_, i) => raw.subarray(i * 1024, (i + 1) * 1024)));

const limits: StreamingLimits = {
  maxFileBytes: 100_000,
  maxFiles: 5,
  maxFields: 10,
  maxFieldBytes: 1000,
  maxTextBytes: 1500,
  maxBodyBytes: 1_000_000,
  inlineFileBytes: 2048,
};

function memoryDestination() {
  const stored = new Map<string, Buffer>();
  const destination: FileDestination = {
    async put(n, filename, file) {
      const chunks: Buffer[] = [];
      for await (const chunk of file) chunks.push(chunk as Buffer);
      const key = `${n}-${filename}`;
      stored.set(key, Buffer.concat(chunks));
      return { url: `mem://${key}`, key };
    },
  };
  return { stored, destination };
}

const unlimited = { take: () => undefined };
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

describe('streamMultipart', () => {
  it('keeps small files inline, sends larger ones to the destination, and keeps the order of x[]', async () => {
    const small = Buffer.alloc(2048, 1);
    const large = Buffer.alloc(50_000, 2);
    const raw = body([
      { name: 'title', value: 'hello' },
      { name: 'files[]', filename: 'large.bin', data: large },
      { name: 'files[]', filename: 'small.bin', data: small },
    ]);
    const { stored, destination } = memoryDestination();
    const result = await streamMultipart(stream(raw), CONTENT_TYPE, limits, unlimited, destination);
    // The identity the buffered path takes of the same body (contract §5), not the raw bytes' hash.
    expect(result.bodyHash).toBe(bodyIdentity(raw, await parseBody(raw, CONTENT_TYPE, limits)));
    expect(result.fields).toEqual({
      title: 'hello',
      files: [
        { type: 'url', data: 'mem://1-large.bin', name: 'large.bin', mime: 'application/octet-stream', size: 50_000, sha256: sha256(large) },
        { type: 'file', name: 'small.bin', mime: 'application/octet-stream', size: 2048, data: `data:application/octet-stream;base64,${small.toString('base64')}` },
      ],
    });
    expect(stored.get('1-large.bin')).toEqual(large);
    expect(stored.size).toBe(1);
  });

  it('answers 413 for a file over the limit, and for text parts over MAX_BODY_BYTES together', async () => {
    const { destination } = memoryDestination();
    const tooBig = body([{ name: 'f', filename: 'f.bin', data: Buffer.alloc(100_001) }]);
    await expect(streamMultipart(stream(tooBig), CONTENT_TYPE, limits, unlimited, destination)).rejects.toMatchObject({ reason: 'file_too_large' });
    const texts = body([{ name: 'a', value: 'x'.repeat(900) }, { name: 'b', value: 'y'.repeat(900) }]);
    await expect(streamMultipart(stream(texts), CONTENT_TYPE, limits, unlimited, destination)).rejects.toMatchObject({ reason: 'body_too_large' });
  });

  it('answers 503 busy when the body budget has no room for a file\'s inline bytes (its part buffers are the store\'s to count)', async () => {
    const { destination } = memoryDestination();
    const raw = body([{ name: 'f', filename: 'f.bin', data: Buffer.alloc(10_000) }]);
    const tight = { take: () => 'budget' as const };
    const error = await streamMultipart(stream(raw), CONTENT_TYPE, limits, tight, destination).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Refusal);
    expect(error).toMatchObject({ status: 503, reason: 'busy' });
  });

  it('answers 503 file_store_unavailable when the destination fails, and 400 for a body cut inside a file', async () => {
    const failing: FileDestination = {
      put: async (_n, _name, file) => {
        file.resume();
        throw new Error('store down');
      },
    };
    const raw = body([{ name: 'f', filename: 'f.bin', data: Buffer.alloc(10_000) }]);
    await expect(streamMultipart(stream(raw), CONTENT_TYPE, limits, unlimited, failing)).rejects.toMatchObject({ status: 503, reason: 'file_store_unavailable' });
    const cut = raw.subarray(0, raw.length - 5000);
    const { destination } = memoryDestination();
    await expect(streamMultipart(stream(cut), CONTENT_TYPE, limits, unlimited, destination)).rejects.toMatchObject({ status: 400, reason: 'invalid_multipart' });
  });
});
