/** Published file names keep no control or bidi characters (issue 20, item 5). */
import { Readable } from 'node:stream';
import { parseMultipart } from '../../src/ingest/multipart';
import { streamMultipart, type FileDestination } from '../../src/ingest/stream-multipart';

const CONTENT_TYPE = 'multipart/form-data; boundary=B';
const limits = { maxFileBytes: 10_000, maxFiles: 5, maxFields: 5, maxFieldBytes: 1000, maxTextBytes: 1000, maxBodyBytes: 100_000, inlineFileBytes: 4 };
const filePart = (disposition: string) =>
  Buffer.concat([Buffer.from(`--B\r\nContent-Disposition: form-data; name="f"; ${disposition}\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.7\r\n--B--\r\n`)]);

const spoofs = [
  ['raw UTF-8 filename with a right-to-left override', filePart(`filename="invoice\u202Efdp.exe"`)],
  ["RFC 5987 filename* with an override", filePart(`filename*=UTF-8''invoice%E2%80%AEfdp.exe`)],
  ['isolates, marks and an embedding', filePart(`filename*=UTF-8''%E2%81%A6invoice%E2%81%A9%E2%80%8E%E2%80%8F%E2%80%AAfdp.exe`)],
  ['C1 controls', filePart(`filename*=UTF-8''invoice%C2%85%C2%9Bfdp.exe`)],
] as const;

describe('file names without hidden direction or control characters', () => {
  it.each(spoofs)('inline file value (buffered parser): %s', async (_, raw) => {
    const { fields } = await parseMultipart(raw, CONTENT_TYPE, limits);
    expect((fields.f as { name: string }).name).toBe('invoicefdp.exe');
  });

  it.each(spoofs)('file stored by reference (streaming parser): %s', async (_, raw) => {
    const destination: FileDestination = {
      async put(n, _filename, body) {
        for await (const _chunk of body);
        return { url: `mem://${n}`, key: `${n}` };
      },
    };
    const streamed = await streamMultipart(Readable.from([raw]), CONTENT_TYPE, limits, { take: () => undefined }, destination);
    expect(streamed.fields.f).toMatchObject({ type: 'url', name: 'invoicefdp.exe' });
  });

  it('keeps a non-ASCII name sent as raw UTF-8 (as browsers send it) intact', async () => {
    const { fields } = await parseMultipart(filePart('filename="résumé ✓.pdf"'), CONTENT_TYPE, limits);
    expect((fields.f as { name: string }).name).toBe('résumé ✓.pdf');
  });
});
