import busboy from 'busboy';
import type { Readable } from 'node:stream';
import { Refusal } from '../outcomes/refusal';
import type { Reason } from '../outcomes/reasons';
import { withoutControlCharacters } from '../files/file-name';
import { sha256Hex } from '../security';
import { MultipartIdentity } from './body-identity';
import { FieldCollector } from './fields';
import { mint } from './file-values';
import { guarded } from './guard';
import { PART_WITHOUT_FORM_DATA, PartCounter } from './multipart-parts';

export interface MultipartLimits {
  maxFileBytes: number;
  maxFiles: number;
  maxFields: number;
  maxFieldBytes: number;
}

/** A file part as it is published. */
export interface FileValue {
  type: 'file';
  name: string;
  mime: string;
  size: number;
  data: string;
}

const REPLACEMENT_CHARACTER = '\uFFFD';

/**
 * A busboy parser with the multipart limits; throws 400 `invalid_multipart` when the content
 * type has no boundary. busboy reports a size or parts limit when it is *reached*, so one more
 * lets exactly the maximum through and refuses anything larger (files and fields count from 0).
 */
function multipartParser(contentType: string, limits: MultipartLimits): busboy.Busboy {
  try {
    return busboy({
      headers: { 'content-type': contentType },
      // Browsers (WHATWG) and curl send a non-ASCII filename="…" as raw UTF-8; busboy's default
      // (latin1) would publish it garbled.
      defParamCharset: 'utf8',
      limits: {
        fileSize: limits.maxFileBytes + 1,
        files: limits.maxFiles,
        fields: limits.maxFields,
        fieldSize: limits.maxFieldBytes + 1,
        parts: limits.maxFiles + limits.maxFields + 1,
      },
    });
  } catch {
    throw new Refusal('invalid_multipart', 'malformed multipart body', { problem: 'missing boundary' });
  }
}

/**
 * busboy fed through `write` and `end`, so that the parts it skips in silence (no
 * Content-Disposition: form-data) are counted too: after its 'close', `skippedPart()` is a part
 * its listeners never heard (multipart-parts.ts).
 */
export function multipartReader(contentType: string, limits: MultipartLimits) {
  const parser = multipartParser(contentType, limits); // throws a Refusal without a boundary
  const counter = PartCounter.for(contentType);
  let heard = 0;
  parser.on('field', () => heard++);
  parser.on('file', () => heard++);
  return {
    parser,
    write(chunk: Buffer): boolean {
      counter?.push(chunk);
      return parser.write(chunk);
    },
    end(chunk?: Buffer): void {
      if (chunk) counter?.push(chunk);
      parser.end(chunk);
    },
    skippedPart: () => counter !== undefined && counter.parts > heard,
  };
}

/** A part without Content-Disposition: form-data is malformed (RFC 7578 §4.2, contract §2.5). */
export function partWithoutFormData(): Refusal {
  return new Refusal('invalid_multipart', 'a multipart part is not form-data', { problem: PART_WITHOUT_FORM_DATA });
}

/**
 * RFC 7578 §4.2: every part names its field. busboy hands a part without `name=` (or with an
 * empty one) to its listeners with `name` undefined: refused, never published under no name.
 */
export function unnamedPart(): Refusal {
  return new Refusal('invalid_multipart', 'a multipart part has no name', {
    problem: 'a part has no name: its Content-Disposition must be form-data with a non-empty name parameter (RFC 7578 §4.2)',
  });
}

/** A multipart body's fields, and its identity (contract §5) taken in the same pass. */
export interface ParsedMultipart {
  fields: Record<string, unknown>;
  bodyHash: string;
}

/** Parses a multipart body already read (and size-limited) as bytes. */
export function parseMultipart(raw: Buffer, contentType: string, limits: MultipartLimits): Promise<ParsedMultipart> {
  return new Promise((resolve, reject) => {
    const reader = multipartReader(contentType, limits); // a throw here rejects the promise
    const { parser } = reader;
    const fields = new FieldCollector();
    const identity = new MultipartIdentity();
    const pendingFiles: Promise<void>[] = [];
    let failed = false;
    // Every handler below is guarded: what it throws fails this request, never the process.
    const fail = (error: unknown) => {
      if (failed) return;
      failed = true;
      reject(error);
    };
    const tooLarge = (reason: Reason, what: string, limit: number) =>
      fail(new Refusal(reason, `${what} exceeds the limit`, { limit: what, max: limit }));

    parser.on(
      'field',
      guarded(fail, (name: string | undefined, value: string | undefined, info: busboy.FieldInfo) => {
        if (!name) return fail(unnamedPart());
        if (info.valueTruncated) return tooLarge('field_too_large', 'a field value', limits.maxFieldBytes);
        // busboy decodes leniently: bytes that are not valid in the part's charset (UTF-8 unless
        // the part names another) become U+FFFD. Refused, as the same bytes are as text/plain.
        if (value === undefined) {
          return fail(new Refusal('unsupported_charset', 'a text part names a charset that cannot be decoded', { field: name }));
        }
        if (value.includes(REPLACEMENT_CHARACTER)) {
          return fail(new Refusal('invalid_encoding', 'a text part is not valid in its charset', { field: name }));
        }
        fields.add(name, value);
        identity.field(name, value);
      }),
    );
    parser.on(
      'file',
      guarded(fail, (name: string | undefined, stream: Readable, info: busboy.FileInfo) => {
        // A body that ends inside a file part destroys the file stream with "Unexpected end of
        // form"; unheard, that 'error' event would be an uncaught exception (the process exits).
        stream.on('error', (error: Error) =>
          fail(new Refusal('invalid_multipart', 'malformed multipart body', { problem: error.message })),
        );
        if (!name) {
          stream.resume();
          return fail(unnamedPart());
        }
        const chunks: Buffer[] = [];
        const mime = info.mimeType || 'application/octet-stream';
        const setIdentityHash = identity.file(name, info.filename, mime);
        pendingFiles.push(
          new Promise<void>((done) => {
            stream.on('data', guarded(fail, (chunk: Buffer) => chunks.push(chunk)));
            stream.on('limit', guarded(fail, () => tooLarge('file_too_large', 'a file', limits.maxFileBytes)));
            stream.on(
              'close',
              guarded(fail, () => {
                const data = Buffer.concat(chunks);
                setIdentityHash(sha256Hex(data));
                const file: FileValue = {
                  type: 'file',
                  name: withoutControlCharacters(info.filename ?? name),
                  mime,
                  size: data.length,
                  data: `data:${mime};base64,${data.toString('base64')}`,
                };
                fields.add(name, mint(file));
                done();
              }),
            );
          }),
        );
      }),
    );
    parser.on('filesLimit', guarded(fail, () => tooLarge('too_many_files', 'the number of files', limits.maxFiles)));
    parser.on('fieldsLimit', guarded(fail, () => tooLarge('too_many_fields', 'the number of fields', limits.maxFields)));
    parser.on('partsLimit', guarded(fail, () => tooLarge('too_many_parts', 'the number of parts', limits.maxFiles + limits.maxFields)));
    parser.on('error', (error: Error) =>
      fail(new Refusal('invalid_multipart', 'malformed multipart body', { problem: error.message })),
    );
    parser.on(
      'close',
      guarded(fail, () => {
        if (reader.skippedPart()) return fail(partWithoutFormData());
        void Promise.all(pendingFiles).then(() => {
          if (!failed) resolve({ fields: fields.result(), bodyHash: identity.digest() });
        });
      }),
    );
    // Synchronous: what busboy itself throws while it takes the bytes rejects the promise too.
    reader.end(raw);
  });
}
