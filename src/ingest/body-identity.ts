import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { Refusal } from '../outcomes/refusal';
import type { Reason } from '../outcomes/reasons';
import { sha256Hex } from '../security';
import { classifyContentType } from './content-type';
import { multipartReader, partWithoutFormData, type MultipartLimits } from './multipart';
import { guarded } from './guard';
import type { ParsedBody } from './parse-body';

/**
 * Contract §5: a body's identity is what the sender meant, not the bytes of one attempt. A
 * multipart body's is its parts in order (names, text values, file names, types, file content
 * hashes): `curl -F` and every multipart client pick a new boundary on each attempt, so a retry
 * has other bytes but the same identity. Any other body's identity is its raw bytes' sha256.
 */
export class MultipartIdentity {
  private readonly parts: string[][] = [];

  field(name: string, value: string): void {
    this.parts.push(['field', name, value]);
  }

  /** A file part, in its place; its content hash is filled in when the part ends. */
  file(name: string, filename: string | undefined, mime: string): (sha256: string) => void {
    const part = ['file', name, filename ?? '', mime, ''];
    this.parts.push(part);
    return (sha256) => {
      part[4] = sha256;
    };
  }

  /** The identity, hex (where the raw bytes' sha256 stands for other bodies). */
  digest(): string {
    const hash = createHash('sha256').update('multipart/form-data\n');
    for (const part of this.parts) hash.update(`${JSON.stringify(part)}\n`);
    return hash.digest('hex');
  }
}

/** The content type as a fingerprint takes it: a multipart boundary belongs to the bytes of one attempt, not to the body. */
export function identityContentType(contentType: string | undefined): string {
  return classifyContentType(contentType)?.kind === 'multipart' ? 'multipart/form-data' : (contentType ?? '');
}

/** The identity of a body already parsed: a multipart body's was taken by its parse. */
export function bodyIdentity(raw: Buffer, parsed: Pick<ParsedBody, 'multipartIdentity'>): string {
  return parsed.multipartIdentity ?? sha256Hex(raw);
}

/**
 * Reads a multipart body only for its identity: files are hashed as they pass, never kept (a
 * replay's body is compared, not stored). 413 past `maxBodyBytes` or a limit, 400 when malformed.
 */
export function multipartIdentity(body: Readable, contentType: string, limits: MultipartLimits & { maxBodyBytes: number }): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = multipartReader(contentType, limits); // a throw here rejects the promise
    const { parser } = reader;
    const identity = new MultipartIdentity();
    const pending: Promise<void>[] = [];
    let size = 0;
    let failed = false;
    // Every handler below is guarded: what it throws fails this request, never the process.
    const fail = (error: unknown) => {
      if (failed) return;
      failed = true;
      body.off('data', onData);
      body.resume(); // what still comes is dropped
      reject(error);
    };
    const malformed = (error: Error) => fail(new Refusal('invalid_multipart', 'malformed multipart body', { problem: error.message }));
    const tooLarge = (what: string, max: number, reason: Reason = 'body_too_large') =>
      fail(new Refusal(reason, `${what} exceeds the limit`, { limit: what, max }));

    // Fed by hand, not piped: what busboy throws while it takes a chunk fails the request.
    const onData = guarded(fail, (chunk: Buffer) => {
      size += chunk.length;
      if (size > limits.maxBodyBytes) return tooLarge('the body', limits.maxBodyBytes);
      if (!reader.write(chunk)) body.pause();
    });
    body.on('data', onData);
    body.on('end', guarded(fail, () => {
      if (!failed) reader.end();
    }));
    body.on('error', () => fail(new Refusal('body_unreadable', 'the request body could not be read')));
    body.on('aborted', () => fail(new Refusal('body_unreadable', 'the request body could not be read')));
    parser.on('drain', () => body.resume());
    parser.on('field', guarded(fail, (name: string, value: string | undefined) => identity.field(name, value ?? '')));
    parser.on('file', guarded(fail, (name: string, stream: Readable, info: { filename?: string; mimeType: string }) => {
      const setHash = identity.file(name, info.filename, info.mimeType || 'application/octet-stream');
      const hash = createHash('sha256');
      stream.on('data', guarded(fail, (chunk: Buffer) => hash.update(chunk)));
      stream.on('limit', () => tooLarge('a file', limits.maxFileBytes, 'file_too_large'));
      stream.on('error', malformed);
      pending.push(new Promise<void>((done) => stream.on('end', guarded(fail, () => done(setHash(hash.digest('hex')))))));
    }));
    parser.on('filesLimit', () => tooLarge('the number of files', limits.maxFiles, 'too_many_files'));
    parser.on('fieldsLimit', () => tooLarge('the number of fields', limits.maxFields, 'too_many_fields'));
    parser.on('partsLimit', () => tooLarge('the number of parts', limits.maxFiles + limits.maxFields, 'too_many_parts'));
    parser.on('error', malformed);
    parser.on('close', guarded(fail, () => {
      if (reader.skippedPart()) return fail(partWithoutFormData());
      void Promise.all(pending).then(() => {
        if (!failed) resolve(identity.digest());
      });
    }));
  });
}
