import busboy from 'busboy';
import { Readable } from 'node:stream';
import { Refusal } from '../outcomes/refusal';
import type { Reason } from '../outcomes/reasons';
import { FieldCollector } from './fields';

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
 * File names are published and often end up in paths, headers and logs downstream: C0 and C1
 * control characters (CR, LF, NUL, ESC, …) are dropped from them.
 */
export function withoutControlCharacters(name: string): string {
  // eslint-disable-next-line no-control-regex
  return name.replace(/[\u0000-\u001f\u007f-\u009f]/g, '');
}

/**
 * A busboy parser with the multipart limits; throws 400 `invalid_multipart` when the content
 * type has no boundary. busboy reports a size or parts limit when it is *reached*, so one more
 * lets exactly the maximum through and refuses anything larger (files and fields count from 0).
 */
export function multipartParser(contentType: string, limits: MultipartLimits): busboy.Busboy {
  try {
    return busboy({
      headers: { 'content-type': contentType },
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

/** Parses a multipart body already read (and size-limited) as bytes. */
export function parseMultipart(raw: Buffer, contentType: string, limits: MultipartLimits): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const parser = multipartParser(contentType, limits); // a throw here rejects the promise
    const fields = new FieldCollector();
    const pendingFiles: Promise<void>[] = [];
    let failed = false;
    const fail = (error: Refusal) => {
      if (failed) return;
      failed = true;
      reject(error);
    };
    const tooLarge = (reason: Reason, what: string, limit: number) =>
      fail(new Refusal(reason, `${what} exceeds the limit`, { limit: what, max: limit }));

    parser.on('field', (name, value: string | undefined, info) => {
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
    });
    parser.on('file', (name, stream, info) => {
      const chunks: Buffer[] = [];
      pendingFiles.push(
        new Promise<void>((done) => {
          stream.on('data', (chunk: Buffer) => chunks.push(chunk));
          // A body that ends inside a file part destroys the file stream with "Unexpected end of
          // form"; unheard, that 'error' event would be an uncaught exception (the process exits).
          stream.on('error', (error: Error) =>
            fail(new Refusal('invalid_multipart', 'malformed multipart body', { problem: error.message })),
          );
          stream.on('limit', () => tooLarge('file_too_large', 'a file', limits.maxFileBytes));
          stream.on('close', () => {
            const data = Buffer.concat(chunks);
            const mime = info.mimeType || 'application/octet-stream';
            const file: FileValue = {
              type: 'file',
              name: withoutControlCharacters(info.filename ?? name),
              mime,
              size: data.length,
              data: `data:${mime};base64,${data.toString('base64')}`,
            };
            fields.add(name, file);
            done();
          });
        }),
      );
    });
    parser.on('filesLimit', () => tooLarge('too_many_files', 'the number of files', limits.maxFiles));
    parser.on('fieldsLimit', () => tooLarge('too_many_fields', 'the number of fields', limits.maxFields));
    parser.on('partsLimit', () => tooLarge('too_many_parts', 'the number of parts', limits.maxFiles + limits.maxFields));
    parser.on('error', (error: Error) =>
      fail(new Refusal('invalid_multipart', 'malformed multipart body', { problem: error.message })),
    );
    parser.on('close', () => {
      Promise.all(pendingFiles).then(() => {
        if (!failed) resolve(fields.result());
      });
    });
    Readable.from([raw]).pipe(parser);
  });
}
