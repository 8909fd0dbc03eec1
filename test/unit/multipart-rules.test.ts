/**
 * The part rules (src/ingest/multipart-rules.ts) are one for every multipart parser: a body in
 * memory (parseMultipart), a body streamed (streamMultipart) and a replay read for its identity
 * (multipartIdentity) take the same parts, in the same order, to the same identity.
 */
import { Readable } from 'node:stream';
import { multipartIdentity } from '../../src/ingest/body-identity';
import { parseMultipart } from '../../src/ingest/multipart';
import { streamMultipart, type FileDestination, type StreamingLimits } from '../../src/ingest/stream-multipart';

const CONTENT_TYPE = 'multipart/form-data; boundary=B';
const limits: StreamingLimits = {
  maxFileBytes: 1000,
  maxFiles: 5,
  maxFields: 10,
  maxFieldBytes: 1000,
  maxTextBytes: 5000,
  maxBodyBytes: 100_000,
  inlineFileBytes: 1000,
};
const text = (name: string, value: string) => `--B\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
const file = (name: string, filename: string, value: string) =>
  `--B\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: text/plain\r\n\r\n${value}\r\n`;
const body = (...parts: string[]) => Buffer.from(`${parts.join('')}--B--\r\n`);
const noStore: FileDestination = { put: () => Promise.reject(new Error('every file here stays inline')) };
const unlimited = { take: () => undefined };
/** One byte at a time: the streaming parser sees each part end before the next begins. */
const trickle = (raw: Buffer) => Readable.from([...raw].map((byte) => Buffer.of(byte)));

const inline = (name: string, value: string) => ({
  type: 'file',
  name,
  mime: 'text/plain',
  size: value.length,
  data: `data:text/plain;base64,${Buffer.from(value).toString('base64')}`,
});

describe('every multipart parser takes the parts by the same rules', () => {
  it('keeps the body order of `x[]` values and fields, files among them, in memory as when streamed', async () => {
    const raw = body(file('x[]', 'a.txt', 'AAA'), text('x[]', 't'), file('f', 'b.txt', 'B'), text('a', '1'));
    const expected = { x: [inline('a.txt', 'AAA'), 't'], f: inline('b.txt', 'B'), a: '1' };
    const buffered = await parseMultipart(raw, CONTENT_TYPE, limits);
    const streamed = await streamMultipart(trickle(raw), CONTENT_TYPE, limits, unlimited, noStore);
    expect(buffered.fields).toEqual(expected);
    expect(streamed.fields).toEqual(expected);
    // Key order too: what is published is serialised in this order.
    expect(JSON.stringify(buffered.fields)).toBe(JSON.stringify(expected));
    expect(JSON.stringify(streamed.fields)).toBe(JSON.stringify(expected));
  });

  it('gives one identity, whichever parser read the body', async () => {
    const raw = body(text('a', '1'), file('f[]', 'a.txt', 'AAA'), file('f[]', 'b.txt', 'BBB'), text('z', 'é'));
    const buffered = await parseMultipart(raw, CONTENT_TYPE, limits);
    const streamed = await streamMultipart(trickle(raw), CONTENT_TYPE, limits, unlimited, noStore);
    const compared = await multipartIdentity(Readable.from([raw]), CONTENT_TYPE, limits);
    expect(streamed.bodyHash).toBe(buffered.bodyHash);
    expect(compared).toBe(buffered.bodyHash);
    const other = await parseMultipart(body(text('a', '1'), file('f[]', 'b.txt', 'BBB'), file('f[]', 'a.txt', 'AAA'), text('z', 'é')), CONTENT_TYPE, limits);
    expect(other.bodyHash).not.toBe(buffered.bodyHash);
  });

  it.each([
    ['a part without a name', body(text('a', '1'), '--B\r\nContent-Disposition: form-data\r\n\r\nx\r\n'), 'invalid_multipart'],
    ['a part that is not form-data', body('--B\r\nContent-Disposition: attachment; name="f"; filename="x"\r\n\r\nx\r\n'), 'invalid_multipart'],
    ['a text part over maxFieldBytes', body(text('a', 'x'.repeat(1001))), 'field_too_large'],
    ['a text part not valid UTF-8', Buffer.concat([Buffer.from('--B\r\nContent-Disposition: form-data; name="a"\r\n\r\n'), Buffer.of(0xff), Buffer.from('\r\n--B--\r\n')]), 'invalid_encoding'],
    ['a file over maxFileBytes', body(file('f', 'big.bin', 'x'.repeat(1001))), 'file_too_large'],
    ['more files than maxFiles', body(...Array.from({ length: 6 }, (_, i) => file(`f${i}`, 'x', 'x'))), 'too_many_files'],
  ])('refuses %s in memory as when streamed', async (_case, raw, reason) => {
    await expect(parseMultipart(raw, CONTENT_TYPE, limits)).rejects.toMatchObject({ reason });
    await expect(streamMultipart(trickle(raw), CONTENT_TYPE, limits, unlimited, noStore)).rejects.toMatchObject({ reason });
  });
});
