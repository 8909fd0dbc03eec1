import { constants } from 'node:fs';
import { access, mkdir, open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { PublishError } from './errors';
import { PartialWriteError, type OutRecord, type Sink } from './sink';

/** Event files hold request data: readable by the gateway's user only. */
const FILE_MODE = 0o600;
const DIR_MODE = 0o700;
const TAIL_CHUNK_BYTES = 64 * 1024;
/**
 * Opened with O_DSYNC where the platform has it: each write returns once its bytes (and the new
 * size) are on disk, as a write then fdatasync would, in one trip to libuv's thread pool
 * instead of two. Every trip's answer waits for the event loop's next turn, which under load
 * is the longest part of a batch's wait. Elsewhere (Windows) the append is followed by fdatasync.
 */
const SYNCED_WRITES = constants.O_DSYNC !== undefined;
const APPEND_FLAGS = SYNCED_WRITES ? constants.O_APPEND | constants.O_CREAT | constants.O_RDWR | constants.O_DSYNC : 'a+';

/** One `<topic>.ndjson`: appends are serialised, and only whole, synced lines count. */
interface TopicFile {
  handle: FileHandle;
  /** Bytes known to be whole lines, written and synced. */
  size: number;
  /** A failed append may have left bytes past `size`: they are cut before the next one. */
  dirty: boolean;
  /** The append under way; the next one starts after it. */
  last: Promise<unknown>;
}

/** The file sink's section of the settings (EVENTS_DIR). */
export interface FileSinkSettings {
  /** One file per topic is appended to in this directory. */
  dir: string;
}

/**
 * Embedded-mode sink: appends one JSON line per record to `<dir>/<topic>.ndjson` and
 * acknowledges a batch only once it is synced (O_DSYNC writes, or fdatasync), so an
 * acknowledged record survives a crash. A short write is continued until every byte is
 * written; a failed append (a full disk) is cut off again before anything else is appended,
 * so no torn line ever sits in the middle of a file, and none is acknowledged. Files are
 * created 0600.
 */
export class FileSink implements Sink {
  readonly name = 'file';
  private readonly files = new Map<string, Promise<TopicFile>>();
  private readonly dir: string;

  constructor(settings: FileSinkSettings) {
    this.dir = settings.dir;
  }

  async start(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: DIR_MODE });
  }

  async ping(): Promise<void> {
    await access(this.dir, constants.W_OK);
  }

  async write(records: OutRecord[]): Promise<void> {
    if (records.length === 0) return;
    const byTopic = new Map<string, number[]>();
    records.forEach((record, i) => {
      const indices = byTopic.get(record.topic) ?? [];
      indices.push(i);
      byTopic.set(record.topic, indices);
    });
    const results = await Promise.allSettled(
      [...byTopic].map(async ([topic, indices]) => {
        const file = await this.file(topic).catch(asPublishError);
        await this.append(file, indices.map((i) => fileLine(records[i])).join(''));
      }),
    );
    const failures = new Map<number, PublishError>();
    [...byTopic.values()].forEach((indices, t) => {
      const result = results[t];
      if (result.status === 'fulfilled') return;
      if (!(result.reason instanceof PublishError)) throw result.reason; // a bug
      for (const i of indices) failures.set(i, result.reason);
    });
    if (failures.size === records.length) throw failures.get(0)!;
    if (failures.size > 0) throw new PartialWriteError(failures);
  }

  async close(): Promise<void> {
    const files = [...this.files.values()];
    this.files.clear();
    await Promise.all(
      files.map(async (pending) => {
        const file = await pending.catch(() => undefined);
        if (!file) return;
        await file.last.catch(() => undefined);
        await file.handle.close();
      }),
    );
  }

  private append(file: TopicFile, text: string): Promise<void> {
    const run = file.last.catch(() => undefined).then(async () => {
      if (file.dirty) {
        await file.handle.truncate(file.size).catch(asPublishError);
        file.dirty = false;
      }
      const bytes = Buffer.from(text, 'utf8');
      try {
        let offset = 0;
        while (offset < bytes.length) {
          const { bytesWritten } = await file.handle.write(bytes, offset, bytes.length - offset);
          if (bytesWritten <= 0) throw Object.assign(new Error('no bytes written'), { code: 'EIO' });
          offset += bytesWritten;
        }
        if (!SYNCED_WRITES) await file.handle.datasync();
        file.size += bytes.length;
      } catch (error) {
        // Cut what was written of this append now; if that fails too, before the next one.
        file.dirty = true;
        await file.handle.truncate(file.size).then(() => (file.dirty = false), () => undefined);
        asPublishError(error);
      }
    });
    file.last = run;
    return run;
  }

  private file(topic: string): Promise<TopicFile> {
    let file = this.files.get(topic);
    if (!file) {
      file = openTopicFile(join(this.dir, `${topic}.ndjson`));
      file.catch(() => this.files.delete(topic));
      this.files.set(topic, file);
    }
    return file;
  }
}

/**
 * Opens for appending (creating it 0600). A file that does not end with a newline was cut
 * short by a crash during an append that was never acknowledged: that torn line is cut off.
 */
async function openTopicFile(path: string): Promise<TopicFile> {
  const handle = await open(path, APPEND_FLAGS, FILE_MODE);
  try {
    const { size } = await handle.stat();
    const whole = await endOfLastLine(handle, size);
    if (whole < size) await handle.truncate(whole);
    return { handle, size: whole, dirty: false, last: Promise.resolve() };
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw error;
  }
}

/** The offset just past the file's last newline (0 if there is none). */
async function endOfLastLine(handle: FileHandle, size: number): Promise<number> {
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - TAIL_CHUNK_BYTES);
    const chunk = Buffer.alloc(end - start);
    await handle.read(chunk, 0, chunk.length, start);
    const newline = chunk.lastIndexOf(0x0a);
    if (newline >= 0) return start + newline + 1;
    end = start;
  }
  return 0;
}

/** A file-system failure (it has an errno code) is the sink's "send it again"; anything else is a bug. */
function asPublishError(error: unknown): never {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^E[A-Z0-9]+$/.test(code)) throw new PublishError('unavailable', `file sink: ${code}`);
  throw error;
}

/** `{ topic, key, headers, value }` with value the event object (already serialised). */
function fileLine(record: OutRecord): string {
  const head = JSON.stringify({ topic: record.topic, key: record.key, headers: record.headers });
  return `${head.slice(0, -1)},"value":${record.value}}\n`;
}
