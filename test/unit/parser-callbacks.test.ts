/**
 * Contract §2.9: a throw inside a stream or parser callback of a request (busboy's 'field' and
 * 'file', a stream's 'data' and 'end') rejects that request's promise; it never escapes as an
 * uncaught exception. Each case makes a collaborator throw from inside such a callback.
 */
import { Readable } from 'node:stream';
import { Refusal } from '../../src/outcomes/refusal';
import { BodyBudget } from '../../src/ingest/body-budget';
import { multipartIdentity } from '../../src/ingest/body-identity';
import { parseMultipart } from '../../src/ingest/multipart';
import { readRawBody } from '../../src/ingest/read-body';
import { streamMultipart, type FileDestination, type StreamingLimits } from '../../src/ingest/stream-multipart';
import { recordProcessErrors, type ProcessErrorRecorder } from '../helpers/process-errors';

const CONTENT_TYPE = 'multipart/form-data; boundary=B';
const limits: StreamingLimits = {
  maxFileBytes: 100_000,
  maxFiles: 5,
  maxFields: 10,
  maxFieldBytes: 1000,
  maxTextBytes: 1500,
  maxBodyBytes: 1_000_000,
  inlineFileBytes: 16,
};
const part = (disposition: string, data: string) => `--B\r\nContent-Disposition: ${disposition}\r\n\r\n${data}\r\n`;
const multipart = (...parts: string[]) => Buffer.from(parts.join('') + '--B--\r\n');

const bug = () => {
  throw new TypeError('a bug inside a callback');
};
const storeNothing: FileDestination = { put: () => Promise.reject(new Error('not used')) };
const unlimited = { take: () => undefined };

let recorder: ProcessErrorRecorder;
beforeEach(() => (recorder = recordProcessErrors()));
afterEach(() => {
  recorder.stop();
  expect(recorder.events).toEqual([]);
});

describe('a part without a name (RFC 7578 §4.2) is a 400, not a crash', () => {
  const unnamed = [
    ['a file part', multipart(part('form-data; filename="x.txt"', 'hello'))],
    ['a text part', multipart(part('form-data', 'hello'))],
    ['a part with an empty name', multipart(part('form-data; name=""', 'hello'))],
    ['an unnamed part after a named one', multipart(part('form-data; name="a"', '1'), part('form-data; filename="y"', 'z'))],
  ] as const;

  it.each(unnamed)('buffered parser: %s', async (_, raw) => {
    const parsed = parseMultipart(raw, CONTENT_TYPE, limits);
    await expect(parsed).rejects.toBeInstanceOf(Refusal);
    await expect(parsed).rejects.toMatchObject({ status: 400, reason: 'invalid_multipart', details: { problem: expect.stringContaining('no name') } });
  });

  it.each(unnamed)('streaming parser: %s', async (_, raw) => {
    const parsed = streamMultipart(Readable.from([raw]), CONTENT_TYPE, limits, unlimited, storeNothing);
    await expect(parsed).rejects.toMatchObject({ status: 400, reason: 'invalid_multipart', details: { problem: expect.stringContaining('RFC 7578') } });
  });
});

describe('a part that is not form-data (RFC 7578 §4.2) is a 400, never dropped in silence', () => {
  const headerless = (data: string) => `--B\r\nContent-Type: text/plain\r\n\r\n${data}\r\n`;
  const notFormData = [
    ['a part without Content-Disposition', multipart(headerless('hello'), part('form-data; name="a"', 'v'))],
    ['an attachment part', multipart(part('attachment; name="b"; filename="x.txt"', 'hello'))],
    ['an attachment part after a named one', multipart(part('form-data; name="a"', 'v'), part('attachment; name="b"', 'hello'))],
  ] as const;
  const problem = { status: 400, reason: 'invalid_multipart', details: { problem: expect.stringContaining('form-data') } };
  // Byte by byte: the delimiter and its CRLF split across chunks are counted all the same.
  const bytes = (raw: Buffer) => Readable.from([...raw].map((b) => Buffer.from([b])));

  it.each(notFormData)('buffered parser: %s', async (_, raw) => {
    await expect(parseMultipart(raw, CONTENT_TYPE, limits)).rejects.toMatchObject(problem);
  });

  it.each(notFormData)('streaming parser, fed byte by byte: %s', async (_, raw) => {
    await expect(streamMultipart(bytes(raw), CONTENT_TYPE, limits, unlimited, storeNothing)).rejects.toMatchObject(problem);
  });

  it.each(notFormData)('replay identity, fed byte by byte: %s', async (_, raw) => {
    await expect(multipartIdentity(bytes(raw), CONTENT_TYPE, limits)).rejects.toMatchObject(problem);
  });

  it('a preamble and an epilogue (even one shaped like a part) are not parts', async () => {
    const raw = Buffer.from(`preamble\r\n${part('form-data; name="a"', 'x')}--B--\r\nepilogue\r\n${headerless('z')}`);
    await expect(parseMultipart(raw, CONTENT_TYPE, limits)).resolves.toMatchObject({ fields: { a: 'x' } });
    await expect(streamMultipart(bytes(raw), CONTENT_TYPE, limits, unlimited, storeNothing)).resolves.toMatchObject({ fields: { a: 'x' } });
  });
});

describe('a throw inside a callback rejects the request', () => {
  it("streaming parser: busboy's 'field' handler (the memory share throws)", async () => {
    const raw = multipart(part('form-data; name="a"', 'text'));
    await expect(streamMultipart(Readable.from([raw]), CONTENT_TYPE, limits, { take: bug }, storeNothing)).rejects.toThrow('a bug inside a callback');
  });

  it("streaming parser: a file stream's 'data' handler (the destination throws)", async () => {
    const raw = multipart(part('form-data; name="f"; filename="big.bin"', 'x'.repeat(100)));
    const destination: FileDestination = { put: bug };
    await expect(streamMultipart(Readable.from([raw]), CONTENT_TYPE, limits, unlimited, destination)).rejects.toThrow('a bug inside a callback');
  });

  it("readRawBody: the request's 'data' handler (the body lease throws)", async () => {
    const req = Readable.from([Buffer.from('{"a":1}')]) as unknown as Parameters<typeof readRawBody>[0];
    Object.assign(req, { headers: {} });
    const lease = new BodyBudget(1_000_000).lease(['k'], 1);
    lease.take = bug;
    const read = readRawBody(req, { limit: 1000, lease, minRate: { limit: 0, windowSeconds: 60 }, timeoutMs: 60_000 });
    await expect(read).rejects.toThrow('a bug inside a callback');
  });
});
