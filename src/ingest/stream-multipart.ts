import { PassThrough, type Readable } from 'node:stream';
import type { StoredObject } from '../files/file-store';
import { Refusal } from '../outcomes/refusal';
import type { Refusal as NoRoom } from './body-budget';
import { FieldCollector } from './fields';
import { fileSlot, inlineFile, readParts, type FilePart, type FileTaker, type MultipartLimits, type PartSink, type PartsControl } from './multipart-rules';
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
export async function streamMultipart(
  body: Readable,
  contentType: string,
  limits: StreamingLimits,
  memory: MemoryShare,
  files: FileDestination,
  /** Told how many body bytes were read once reading stops, ended or refused (the delivery log's `bytes`). */
  counted?: (bytes: number) => void,
): Promise<StreamedMultipart> {
  const fields = new FieldCollector();
  const streamed = { stream: body, maxBodyBytes: limits.maxBodyBytes, afterRefusal: 'pause' as const, counted };
  const bodyHash = await readParts(streamed, contentType, limits, (control) => new UploadingSink(fields, limits, memory, files, control));
  return { fields: fields.result(), bodyHash };
}

/** Text parts within maxTextBytes and the memory share; file parts inline up to inlineFileBytes, else to the store. */
class UploadingSink implements PartSink {
  private textBytes = 0;
  private fileCount = 0;

  constructor(
    private readonly fields: FieldCollector,
    private readonly limits: StreamingLimits,
    private readonly memory: MemoryShare,
    private readonly files: FileDestination,
    private readonly control: PartsControl,
  ) {}

  field(name: string, value: string): void {
    const bytes = Buffer.byteLength(name) + Buffer.byteLength(value);
    this.textBytes += bytes;
    if (this.textBytes > this.limits.maxTextBytes) return this.control.tooLarge('body_too_large', 'the text parts', this.limits.maxTextBytes);
    if (this.take(bytes)) this.fields.add(name, value);
  }

  file(part: FilePart, stream: Readable): FileTaker {
    return this.fileTaker(++this.fileCount, part, stream, fileSlot(this.fields, part.field));
  }

  /** Whether the memory share had room for `bytes` (if not, the request is refused). */
  private take(bytes: number): boolean {
    const refusal = this.memory.take(bytes);
    if (refusal) this.control.fail(noRoom(refusal));
    return refusal === undefined;
  }

  private fileTaker(n: number, part: FilePart, stream: Readable, fill: (value: object) => void): FileTaker {
    const head: Buffer[] = [];
    let size = 0;
    let upload: { pass: PassThrough; stored: Promise<StoredObject> } | undefined;
    const startUpload = () => {
      const pass = new PassThrough();
      const stored = this.files.put(n, part.filename, pass, part.mime);
      // Its failure is read where the part ends (or the request already failed): never unhandled.
      stored.catch((error: unknown) => this.control.fail(asRefusal(error)));
      for (const chunk of head.splice(0)) pass.write(chunk);
      return { pass, stored };
    };
    return {
      chunk: (bytes) => {
        size += bytes.length;
        if (!upload && size <= this.limits.inlineFileBytes) {
          if (this.take(bytes.length)) head.push(bytes);
          return;
        }
        upload ??= startUpload();
        if (!upload.pass.write(bytes)) {
          stream.pause();
          upload.pass.once('drain', () => stream.resume());
        }
      },
      end: (sha256) => {
        if (!upload) return fill(inlineFile(part, Buffer.concat(head)));
        upload.pass.end();
        const { name, mime } = part;
        return upload.stored.then((object) => fill({ type: 'url', data: object.url, name, mime, size, sha256 } satisfies FileReference));
      },
    };
  }
}

function asRefusal(error: unknown): Refusal {
  if (error instanceof Refusal) return error;
  return new Refusal('file_store_unavailable', 'the file store did not take a file; send it again', {});
}
