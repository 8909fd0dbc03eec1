import { createHash } from 'node:crypto';
import { PassThrough, type Readable } from 'node:stream';
import type busboy from 'busboy';
import type { StoredObject } from '../files/file-store';
import { withoutControlCharacters } from '../files/file-name';
import { Refusal } from '../outcomes/refusal';
import type { Reason } from '../outcomes/reasons';
import { FieldCollector } from './fields';
import { mint } from './file-values';
import { guarded } from './guard';
import { multipartReader, partWithoutFormData, unnamedPart, type FileValue, type MultipartLimits } from './multipart';
import type { Refusal as NoRoom } from './body-budget';
import { MultipartIdentity } from './body-identity';
import { noRoom } from './read-body';

/** A file part kept in the object store (contract §12). */
export interface FileReference {
  type: 'url';
  /** `s3://<bucket>/<key>` */
  data: string;
  name: string;
  mime: string;
  size: number;
  /** Of the file's bytes, hex. */
  sha256: string;
}

export interface StreamingLimits extends MultipartLimits {
  /** All text parts together (MAX_BODY_BYTES): files are counted by maxFileBytes instead. */
  maxTextBytes: number;
  /** The whole body, boundaries and part headers included. */
  maxBodyBytes: number;
  /** A file up to this size stays inline (a data URL); a larger one goes to the store. */
  inlineFileBytes: number;
}

/** The request's share of the process-wide body budget (a BodyLease): undefined when taken, else why not. */
export interface MemoryShare {
  take(bytes: number): NoRoom | undefined;
}

export interface FileDestination {
  /** Streams the file part number `n` to the store (which counts the part buffers it holds). */
  put(n: number, filename: string | undefined, body: Readable, mime: string): Promise<StoredObject>;
}

export interface StreamedMultipart {
  fields: Record<string, unknown>;
  /** The body's identity (contract §5: its parts, not its boundary), as the buffered path takes it (fingerprints, key reuse). */
  bodyHash: string;
}

/**
 * Parses a multipart body while it arrives (busboy on the request stream). A file part is
 * held in memory only up to `inlineFileBytes`; past that it streams to `files`, part by part,
 * with backpressure from the store down to the sender's socket. Limits answer 413 the moment
 * they are passed; what is already uploaded is the caller's to discard (RequestUploads).
 */
export function streamMultipart(
  body: Readable,
  contentType: string,
  limits: StreamingLimits,
  memory: MemoryShare,
  files: FileDestination,
  /** Told how many body bytes were read once reading stops, ended or refused (the delivery log's `bytes`). */
  counted?: (bytes: number) => void,
): Promise<StreamedMultipart> {
  return new Promise((resolve, reject) => {
    const reader = multipartReader(contentType, limits); // a throw here rejects the promise
    const { parser } = reader;
    const fields = new FieldCollector();
    const pendingFiles: Promise<void>[] = [];
    const identity = new MultipartIdentity();
    let bodyBytes = 0;
    let textBytes = 0;
    let fileCount = 0;
    let failed = false;
    let settled = false;

    // Every handler below is guarded: what it throws fails this request, never the process.
    const fail = (error: unknown) => {
      if (failed || settled) return;
      failed = true;
      counted?.(bodyBytes);
      body.off('data', onBodyData);
      body.pause(); // what still comes is dropped by the error handler's lingering close
      reject(error);
    };
    // The body is fed to busboy by hand, not piped: what busboy throws while it takes a chunk
    // (inside the body's 'data' emit, where pipe would let it escape) fails the request.
    const onBodyData = guarded(fail, (chunk: Buffer) => {
      bodyBytes += chunk.length;
      if (bodyBytes > limits.maxBodyBytes) return tooLarge('body_too_large', 'the body', limits.maxBodyBytes);
      if (!reader.write(chunk)) body.pause();
    });
    const onBodyEnd = guarded(fail, () => {
      if (failed) return;
      counted?.(bodyBytes);
      reader.end();
    });
    const onBodyError = () => fail(new Refusal('body_unreadable', 'the request body could not be read'));
    const tooLarge = (reason: Reason, what: string, limit: number) =>
      fail(new Refusal(reason, `${what} exceeds the limit`, { limit: what, max: limit }));
    const malformed = (error: Error) => fail(new Refusal('invalid_multipart', 'malformed multipart body', { problem: error.message }));
    const take = (bytes: number) => {
      const refusal = memory.take(bytes);
      if (refusal) fail(noRoom(refusal));
      return refusal === undefined;
    };

    parser.on('field', guarded(fail, (name: string | undefined, value: string | undefined, info: busboy.FieldInfo) => {
      if (failed) return;
      if (!name) return fail(unnamedPart());
      if (info.valueTruncated) return tooLarge('field_too_large', 'a field value', limits.maxFieldBytes);
      // As the buffered parser (multipart.ts): invalid bytes in a text part are refused, not replaced.
      if (value === undefined) {
        return fail(new Refusal('unsupported_charset', 'a text part names a charset that cannot be decoded', { field: name }));
      }
      if (value.includes('\uFFFD')) return fail(new Refusal('invalid_encoding', 'a text part is not valid in its charset', { field: name }));
      const bytes = Buffer.byteLength(name) + Buffer.byteLength(value);
      textBytes += bytes;
      if (textBytes > limits.maxTextBytes) return tooLarge('body_too_large', 'the text parts', limits.maxTextBytes);
      if (!take(bytes)) return;
      fields.add(name, value);
      identity.field(name, value);
    }));
    parser.on('file', guarded(fail, (name: string | undefined, stream: Readable, info: busboy.FileInfo) => {
      // A body that ends inside a file part destroys the file stream ("Unexpected end of form").
      stream.on('error', malformed);
      if (failed) return void stream.resume();
      if (!name) {
        stream.resume();
        return fail(unnamedPart());
      }
      const n = ++fileCount;
      const mime = info.mimeType || 'application/octet-stream';
      // Added now, filled in when the part ends: files keep their order in `x[]`.
      const value = mint({} as FileValue | FileReference);
      fields.add(name, value);
      const setIdentityHash = identity.file(name, info.filename, mime);
      const sha256 = createHash('sha256');
      const head: Buffer[] = [];
      let size = 0;
      let upload: { pass: PassThrough; stored: Promise<StoredObject> } | undefined;

      const startUpload = () => {
        const pass = new PassThrough();
        const stored = files.put(n, info.filename, pass, mime);
        // Its failure is read where the part ends (or the request already failed): never unhandled.
        stored.catch((error: unknown) => fail(asRefusal(error)));
        for (const chunk of head.splice(0)) pass.write(chunk);
        return { pass, stored };
      };
      stream.on('data', guarded(fail, (chunk: Buffer) => {
        if (failed) return;
        size += chunk.length;
        sha256.update(chunk);
        if (!upload && size <= limits.inlineFileBytes) {
          if (take(chunk.length)) head.push(chunk);
          return;
        }
        upload ??= startUpload();
        if (upload && !upload.pass.write(chunk)) {
          stream.pause();
          upload.pass.once('drain', () => stream.resume());
        }
      }));
      stream.on('limit', guarded(fail, () => tooLarge('file_too_large', 'a file', limits.maxFileBytes)));
      pendingFiles.push(
        new Promise<void>((done) => {
          stream.on('end', guarded(fail, () => {
            if (failed) return done();
            const filename = withoutControlCharacters(info.filename ?? name);
            const fileHash = sha256.digest('hex');
            setIdentityHash(fileHash);
            if (!upload) {
              const data = Buffer.concat(head);
              Object.assign(value, { type: 'file', name: filename, mime, size, data: `data:${mime};base64,${data.toString('base64')}` });
              return done();
            }
            upload.pass.end();
            upload.stored.then(
              (object) => {
                Object.assign(value, { type: 'url', data: object.url, name: filename, mime, size, sha256: fileHash });
                done();
              },
              () => done(),
            );
          }));
        }),
      );
    }));
    parser.on('filesLimit', guarded(fail, () => tooLarge('too_many_files', 'the number of files', limits.maxFiles)));
    parser.on('fieldsLimit', guarded(fail, () => tooLarge('too_many_fields', 'the number of fields', limits.maxFields)));
    parser.on('partsLimit', guarded(fail, () => tooLarge('too_many_parts', 'the number of parts', limits.maxFiles + limits.maxFields)));
    parser.on('drain', () => body.resume());
    parser.on('error', malformed);
    parser.on('close', guarded(fail, () => {
      if (reader.skippedPart()) return fail(partWithoutFormData());
      void Promise.all(pendingFiles).then(() => {
        if (failed) return;
        settled = true;
        body.off('error', onBodyError);
        body.off('aborted', onBodyError);
        resolve({ fields: fields.result(), bodyHash: identity.digest() });
      });
    }));
    body.on('data', onBodyData);
    body.on('end', onBodyEnd);
    body.on('error', onBodyError);
    body.on('aborted', onBodyError);
  });
}

function asRefusal(error: unknown): Refusal {
  if (error instanceof Refusal) return error;
  return new Refusal('file_store_unavailable', 'the file store did not take a file; send it again', {});
}
