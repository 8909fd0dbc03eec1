import busboy from 'busboy';
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { withoutControlCharacters } from '../files/file-name';
import { Refusal } from '../outcomes/refusal';
import type { Reason } from '../outcomes/reasons';
import type { FieldCollector } from './fields';
import { mint } from './file-values';
import { guarded } from './guard';
import { MultipartIdentity } from './multipart-identity';
import { PART_WITHOUT_FORM_DATA, PartCounter } from './multipart-parts';

/**
 * The rules of a multipart body's parts, in one place for every parser (multipart.ts: a body
 * in memory; stream-multipart.ts: a body streamed, files to the store; body-identity.ts: a
 * replay's identity): busboy with the limits, every part form-data (multipart-parts.ts) and
 * named, text parts within their size and decodable, the file parts' names, types and
 * hashes, the body's identity, and a refusal for each way a body breaks them. A parser gets
 * the parts that pass, in order, through a PartSink.
 */

export interface MultipartLimits {
  maxFileBytes: number;
  maxFiles: number;
  maxFields: number;
  maxFieldBytes: number;
}

/** A file part as it is published inline. */
export interface FileValue {
  type: 'file';
  name: string;
  mime: string;
  size: number;
  data: string;
}

/** A file part as the rules hand it to a parser. */
export interface FilePart {
  /** The field it is sent under (`x`, or `x[]` for one of several). */
  field: string;
  /** The sender's filename, if it names one. */
  filename: string | undefined;
  /** The name it is published under: the filename without control characters, else the field. */
  name: string;
  /** Its Content-Type; application/octet-stream when it names none. */
  mime: string;
}

/** What a parser does with one file part's bytes. */
export interface FileTaker {
  chunk(bytes: Buffer): void;
  /** The part ended whole (its bytes' sha256, hex); the body is done once what this returns settles. */
  end(sha256: string, size: number): unknown;
}

/** What a parser does with the parts that pass the rules, in the body's order. */
export interface PartSink {
  field(name: string, value: string): void;
  /** A file part begins; its stream is there for backpressure (pause, resume), its bytes go to the taker. */
  file(part: FilePart, stream: Readable): FileTaker;
}

/** What a parser's sink may do to the request: refuse it. */
export interface PartsControl {
  fail(error: unknown): void;
  tooLarge(reason: Reason, what: string, limit: number): void;
}

/** A body read from a stream, fed to busboy by hand (not piped: what busboy throws while it takes a chunk fails the request). */
export interface StreamedBody {
  stream: Readable;
  /** The whole body, boundaries and part headers included. */
  maxBodyBytes: number;
  /** Once refused: `pause` the stream (the error handler's lingering close drops the rest) or `drain` it here. */
  afterRefusal: 'pause' | 'drain';
  /** Told how many body bytes were read once reading stops, ended or refused. */
  counted?: (bytes: number) => void;
}

/**
 * `published`: the parts are published, so each must have a name, a text part must be within
 * maxFieldBytes and valid in its charset. `compared`: only the body's identity is taken (a
 * replay's, compared with an accepted body's): a part the parse would refuse gives an identity
 * no accepted body has, so these rules are not applied again.
 */
export type PartValues = 'published' | 'compared';

const REPLACEMENT_CHARACTER = '\uFFFD';
const OCTET_STREAM = 'application/octet-stream';

/**
 * Reads a multipart body through the rules into the sink `sinkFor` makes; resolves with the
 * body's identity (contract §5) once every part is in, rejects with a Refusal at the first
 * rule broken (400 malformed, 413 a limit) or whatever a handler throws.
 */
export function readParts(
  body: Buffer | StreamedBody,
  contentType: string,
  limits: MultipartLimits,
  sinkFor: (control: PartsControl) => PartSink,
  values: PartValues = 'published',
): Promise<string> {
  return new Promise((resolve, reject) => {
    const run = new MultipartRun(contentType, limits, values, resolve, reject); // a throw here rejects the promise
    run.listen(sinkFor(run));
    // Synchronous: what busboy itself throws while it takes the bytes rejects the promise too.
    if (Buffer.isBuffer(body)) run.end(body);
    else feed(run, body);
  });
}

/** Fills a stream's bytes into the run: at most maxBodyBytes, paused while busboy is full. */
function feed(run: MultipartRun, body: StreamedBody): void {
  const { stream, maxBodyBytes, counted } = body;
  let bytes = 0;
  const onData = guarded(run.fail, (chunk: Buffer) => {
    bytes += chunk.length;
    if (bytes > maxBodyBytes) return run.tooLarge('body_too_large', 'the body', maxBodyBytes);
    if (!run.write(chunk)) stream.pause();
  });
  const onEnd = guarded(run.fail, () => {
    if (run.failed) return;
    counted?.(bytes);
    run.end();
  });
  const onError = () => run.fail(new Refusal('body_unreadable', 'the request body could not be read'));
  run.onRefusal = () => {
    counted?.(bytes);
    stream.off('data', onData);
    if (body.afterRefusal === 'pause') stream.pause();
    else stream.resume();
  };
  run.onDone = () => {
    stream.off('error', onError);
    stream.off('aborted', onError);
  };
  run.parser.on('drain', () => stream.resume());
  stream.on('data', onData);
  stream.on('end', onEnd);
  stream.on('error', onError);
  stream.on('aborted', onError);
}

/** One body's way through busboy and the rules. Every handler is guarded: what it throws fails this request, never the process. */
class MultipartRun implements PartsControl {
  readonly parser: busboy.Busboy;
  failed = false;
  /** Run once, on the first refusal, before the promise rejects. */
  onRefusal = (): void => undefined;
  /** Run once every part is in, before the promise resolves. */
  onDone = (): void => undefined;
  private settled = false;
  private heard = 0;
  private readonly counter: PartCounter | undefined;
  private readonly identity = new MultipartIdentity();
  private readonly pendingFiles: Promise<void>[] = [];

  constructor(
    contentType: string,
    private readonly limits: MultipartLimits,
    private readonly values: PartValues,
    private readonly resolve: (bodyHash: string) => void,
    private readonly reject: (error: unknown) => void,
  ) {
    this.parser = multipartParser(contentType, limits); // throws a Refusal without a boundary
    // busboy skips a part without Content-Disposition: form-data in silence: counted, they are found.
    this.counter = PartCounter.for(contentType);
  }

  readonly fail = (error: unknown): void => {
    if (this.failed || this.settled) return;
    this.failed = true;
    this.onRefusal();
    this.reject(error);
  };

  readonly tooLarge = (reason: Reason, what: string, limit: number): void =>
    this.fail(new Refusal(reason, `${what} exceeds the limit`, { limit: what, max: limit }));

  private readonly malformed = (error: Error): void =>
    this.fail(new Refusal('invalid_multipart', 'malformed multipart body', { problem: error.message }));

  write(chunk: Buffer): boolean {
    this.counter?.push(chunk);
    return this.parser.write(chunk);
  }

  end(chunk?: Buffer): void {
    if (chunk) this.counter?.push(chunk);
    this.parser.end(chunk);
  }

  listen(sink: PartSink): void {
    const { parser, fail, limits } = this;
    parser.on('field', guarded(fail, (name: string | undefined, value: string | undefined, info: busboy.FieldInfo) => this.onField(sink, name, value, info)));
    parser.on('file', guarded(fail, (name: string | undefined, stream: Readable, info: busboy.FileInfo) => this.onFile(sink, name, stream, info)));
    parser.on('filesLimit', guarded(fail, () => this.tooLarge('too_many_files', 'the number of files', limits.maxFiles)));
    parser.on('fieldsLimit', guarded(fail, () => this.tooLarge('too_many_fields', 'the number of fields', limits.maxFields)));
    parser.on('partsLimit', guarded(fail, () => this.tooLarge('too_many_parts', 'the number of parts', limits.maxFiles + limits.maxFields)));
    parser.on('error', this.malformed);
    parser.on('close', guarded(fail, () => this.onClose()));
  }

  private onField(sink: PartSink, name: string | undefined, value: string | undefined, info: busboy.FieldInfo): void {
    this.heard++;
    if (this.failed) return;
    const refusal = this.values === 'published' ? fieldRefusal(name, value, info, this.limits) : undefined;
    if (refusal) return this.fail(refusal);
    sink.field(name ?? '', value ?? '');
    if (!this.failed) this.identity.field(name ?? '', value ?? '');
  }

  private onFile(sink: PartSink, name: string | undefined, stream: Readable, info: busboy.FileInfo): void {
    this.heard++;
    // A body that ends inside a file part destroys the file stream with "Unexpected end of
    // form"; unheard, that 'error' event would be an uncaught exception (the process exits).
    stream.on('error', this.malformed);
    if (this.failed) return void stream.resume();
    if (!name && this.values === 'published') {
      stream.resume();
      return this.fail(unnamedPart());
    }
    const field = name ?? '';
    const part: FilePart = { field, filename: info.filename, name: withoutControlCharacters(info.filename ?? field), mime: info.mimeType || OCTET_STREAM };
    const setIdentityHash = this.identity.file(field, part.filename, part.mime);
    const taker = sink.file(part, stream);
    const hash = createHash('sha256');
    let size = 0;
    stream.on('data', guarded(this.fail, (chunk: Buffer) => {
      if (this.failed) return;
      size += chunk.length;
      hash.update(chunk);
      taker.chunk(chunk);
    }));
    stream.on('limit', guarded(this.fail, () => this.tooLarge('file_too_large', 'a file', this.limits.maxFileBytes)));
    const ended = new Promise<void>((done) => {
      stream.on('end', guarded(this.fail, () => {
        if (this.failed) return done();
        const sha256 = hash.digest('hex');
        setIdentityHash(sha256);
        Promise.resolve(taker.end(sha256, size)).then(() => done(), () => done());
      }));
    });
    this.pendingFiles.push(ended);
  }

  private onClose(): void {
    if (this.counter !== undefined && this.counter.parts > this.heard) return this.fail(partWithoutFormData());
    void Promise.all(this.pendingFiles).then(() => {
      if (this.failed) return;
      this.settled = true;
      this.onDone();
      this.resolve(this.identity.digest());
    });
  }
}

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

/** Why a text part may not be published, if it may not. */
function fieldRefusal(name: string | undefined, value: string | undefined, info: busboy.FieldInfo, limits: MultipartLimits): Refusal | undefined {
  if (!name) return unnamedPart();
  if (info.valueTruncated) {
    return new Refusal('field_too_large', 'a field value exceeds the limit', { limit: 'a field value', max: limits.maxFieldBytes });
  }
  // busboy decodes leniently: bytes that are not valid in the part's charset (UTF-8 unless
  // the part names another) become U+FFFD. Refused, as the same bytes are as text/plain.
  if (value === undefined) return new Refusal('unsupported_charset', 'a text part names a charset that cannot be decoded', { field: name });
  if (value.includes(REPLACEMENT_CHARACTER)) return new Refusal('invalid_encoding', 'a text part is not valid in its charset', { field: name });
  return undefined;
}

/** A part without Content-Disposition: form-data is malformed (RFC 7578 §4.2, contract §2.5). */
function partWithoutFormData(): Refusal {
  return new Refusal('invalid_multipart', 'a multipart part is not form-data', { problem: PART_WITHOUT_FORM_DATA });
}

/**
 * RFC 7578 §4.2: every part names its field. busboy hands a part without `name=` (or with an
 * empty one) to its listeners with `name` undefined: refused, never published under no name.
 */
function unnamedPart(): Refusal {
  return new Refusal('invalid_multipart', 'a multipart part has no name', {
    problem: 'a part has no name: its Content-Disposition must be form-data with a non-empty name parameter (RFC 7578 §4.2)',
  });
}

/**
 * A file part's place among the fields, taken when the part begins, so that files keep the
 * body's order among `x[]`'s values whenever their bytes end; returns how to fill it in.
 */
export function fileSlot(fields: FieldCollector, field: string): (value: object) => void {
  const slot = mint({});
  fields.add(field, slot);
  return (value) => void Object.assign(slot, value);
}

/** A file part published inline, as a data URL. */
export function inlineFile(part: FilePart, bytes: Buffer): FileValue {
  const { name, mime } = part;
  return { type: 'file', name, mime, size: bytes.length, data: `data:${mime};base64,${bytes.toString('base64')}` };
}
