/** Contract §5: a multipart body's identity is its parts, not the bytes of one attempt (issue 22, item 1). */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { Refusal } from '../../src/outcomes/refusal';
import { bodyIdentity, identityContentType, multipartIdentity } from '../../src/ingest/body-identity';
import { parseBody } from '../../src/ingest/parse-body';

type Part = { name: string; value?: string; filename?: string; mime?: string; data?: Buffer };

/** A multipart body as a client writes it, with its own boundary. */
function multipart(boundary: string, parts: Part[]): { raw: Buffer; contentType: string } {
  const pieces: Buffer[] = [];
  for (const part of parts) {
    const disposition = part.filename !== undefined ? `; filename="${part.filename}"` : '';
    const type = part.data ? `\r\nContent-Type: ${part.mime ?? 'application/octet-stream'}` : '';
    pieces.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"${disposition}${type}\r\n\r\n`));
    pieces.push(part.data ?? Buffer.from(part.value ?? ''));
    pieces.push(Buffer.from('\r\n'));
  }
  pieces.push(Buffer.from(`--${boundary}--\r\n`));
  return { raw: Buffer.concat(pieces), contentType: `multipart/form-data; boundary=${boundary}` };
}

const limits = { maxFileBytes: 100_000, maxFiles: 5, maxFields: 10, maxFieldBytes: 1000 };
const PARTS: Part[] = [
  { name: 'subject', value: 'report' },
  { name: 'doc', filename: 'a.pdf', mime: 'application/pdf', data: Buffer.alloc(20_000, 7) },
  { name: 'note', value: 'x' },
];
/** As the buffered path takes it: from the one parse of the body. */
const identityOf = async ({ raw, contentType }: { raw: Buffer; contentType: string }) => bodyIdentity(raw, await parseBody(raw, contentType, limits));

describe('body identity', () => {
  it('is the same for the same parts sent with two boundaries (a retried curl -F)', async () => {
    const first = multipart('------------------------a1b2c3', PARTS);
    const retry = multipart('------------------------d4e5f6', PARTS);
    expect(first.raw.equals(retry.raw)).toBe(false);
    expect(await identityOf(first)).toBe(await identityOf(retry));
  });

  it.each([
    ['a text value', (parts: Part[]) => [{ ...parts[0], value: 'other' }, parts[1], parts[2]]],
    ['a part name', (parts: Part[]) => [{ ...parts[0], name: 'title' }, parts[1], parts[2]]],
    ['a file name', (parts: Part[]) => [parts[0], { ...parts[1], filename: 'b.pdf' }, parts[2]]],
    ['a file type', (parts: Part[]) => [parts[0], { ...parts[1], mime: 'image/png' }, parts[2]]],
    ['one byte of a file', (parts: Part[]) => [parts[0], { ...parts[1], data: Buffer.concat([Buffer.alloc(19_999, 7), Buffer.from([8])]) }, parts[2]]],
    ['the order of the parts', (parts: Part[]) => [parts[2], parts[1], parts[0]]],
  ])('differs when %s differs', async (_what, change) => {
    expect(await identityOf(multipart('b1', change(PARTS)))).not.toBe(await identityOf(multipart('b1', PARTS)));
  });

  it('is the raw bytes\' sha256 for any other body', async () => {
    const raw = Buffer.from('{"a":1}');
    expect(await identityOf({ raw, contentType: 'application/json' })).toBe(createHash('sha256').update(raw).digest('hex'));
  });

  it('read from a stream, it is what the buffered body gives, and a body over its limit is 413', async () => {
    const body = multipart('stream-b', PARTS);
    const chunks = Array.from({ length: Math.ceil(body.raw.length / 1000) }, (_, i) => body.raw.subarray(i * 1000, (i + 1) * 1000));
    const streamed = await multipartIdentity(Readable.from(chunks), body.contentType, { ...limits, maxBodyBytes: body.raw.length });
    expect(streamed).toBe(await identityOf(body));
    await expect(multipartIdentity(Readable.from(chunks), body.contentType, { ...limits, maxBodyBytes: 1000 })).rejects.toMatchObject({
      status: 413,
    } satisfies Partial<Refusal>);
  });

  it('is taken by the parse of a multipart body itself (no second pass over its bytes)', async () => {
    const body = multipart('one-pass', PARTS);
    const parsed = await parseBody(body.raw, body.contentType, limits);
    expect(parsed.multipartIdentity).toBe(await multipartIdentity(Readable.from([body.raw]), body.contentType, { ...limits, maxBodyBytes: body.raw.length }));
    expect(parsed.input).toMatchObject({ subject: 'report', note: 'x', doc: { type: 'file', name: 'a.pdf', size: 20_000 } });
  });

  it('takes a multipart content type without its boundary for a fingerprint', () => {
    expect(identityContentType('multipart/form-data; boundary=abc')).toBe('multipart/form-data');
    expect(identityContentType('application/json; charset=utf-8')).toBe('application/json; charset=utf-8');
  });
});
