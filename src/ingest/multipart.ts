import busboy from 'busboy';
import { Readable } from 'node:stream';
import { HttpError } from '../http/errors';
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

/** Parses a multipart body already read (and size-limited) as bytes. */
export function parseMultipart(raw: Buffer, contentType: string, limits: MultipartLimits): Promise<Record<string, unknown>> {
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: { 'content-type': contentType },
      // busboy reports a size or parts limit when it is *reached*, so one more lets exactly
      // the maximum through and refuses anything larger (files and fields count from 0).
      limits: {
        fileSize: limits.maxFileBytes + 1,
        files: limits.maxFiles,
        fields: limits.maxFields,
        fieldSize: limits.maxFieldBytes + 1,
        parts: limits.maxFiles + limits.maxFields + 1,
      },
    });
  } catch {
    return Promise.reject(new HttpError('BAD_REQUEST', 'malformed multipart body', { reason: 'missing boundary' }));
  }

  return new Promise((resolve, reject) => {
    const fields = new FieldCollector();
    const pendingFiles: Promise<void>[] = [];
    let failed = false;
    const fail = (error: HttpError) => {
      if (failed) return;
      failed = true;
      reject(error);
    };
    const tooLarge = (what: string, limit: number) =>
      fail(new HttpError('PAYLOAD_TOO_LARGE', `${what} exceeds the limit`, { limit: what, max: limit }));

    parser.on('field', (name, value, info) => {
      if (info.valueTruncated) return tooLarge('a field value', limits.maxFieldBytes);
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
            fail(new HttpError('BAD_REQUEST', 'malformed multipart body', { reason: error.message })),
          );
          stream.on('limit', () => tooLarge('a file', limits.maxFileBytes));
          stream.on('close', () => {
            const data = Buffer.concat(chunks);
            const mime = info.mimeType || 'application/octet-stream';
            const file: FileValue = {
              type: 'file',
              name: info.filename ?? name,
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
    parser.on('filesLimit', () => tooLarge('the number of files', limits.maxFiles));
    parser.on('fieldsLimit', () => tooLarge('the number of fields', limits.maxFields));
    parser.on('partsLimit', () => tooLarge('the number of parts', limits.maxFiles + limits.maxFields));
    parser.on('error', (error: Error) =>
      fail(new HttpError('BAD_REQUEST', 'malformed multipart body', { reason: error.message })),
    );
    parser.on('close', () => {
      Promise.all(pendingFiles).then(() => {
        if (!failed) resolve(fields.result());
      });
    });
    Readable.from([raw]).pipe(parser);
  });
}
