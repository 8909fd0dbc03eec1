import { constants } from 'node:fs';
import { access, mkdir, open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { OutRecord, Sink } from './sink';

/**
 * Embedded-mode sink: appends one JSON line per record to `<dir>/<topic>.ndjson` and
 * acknowledges a batch only after fdatasync, so an acknowledged record survives a crash.
 */
export class FileSink implements Sink {
  readonly name = 'file';
  private readonly files = new Map<string, Promise<FileHandle>>();

  constructor(private readonly dir: string) {}

  async start(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
  }

  async ping(): Promise<void> {
    await access(this.dir, constants.W_OK);
  }

  async write(records: OutRecord[]): Promise<void> {
    const byTopic = new Map<string, string[]>();
    for (const record of records) {
      const lines = byTopic.get(record.topic) ?? [];
      lines.push(fileLine(record));
      byTopic.set(record.topic, lines);
    }
    await Promise.all(
      [...byTopic].map(async ([topic, lines]) => {
        const file = await this.file(topic);
        await file.write(lines.join(''));
        await file.datasync();
      }),
    );
  }

  async close(): Promise<void> {
    const handles = [...this.files.values()];
    this.files.clear();
    await Promise.all(handles.map(async (handle) => (await handle.catch(() => undefined))?.close()));
  }

  private file(topic: string): Promise<FileHandle> {
    let handle = this.files.get(topic);
    if (!handle) {
      handle = open(join(this.dir, `${topic}.ndjson`), 'a');
      handle.catch(() => this.files.delete(topic));
      this.files.set(topic, handle);
    }
    return handle;
  }
}

/** `{ topic, key, headers, value }` with value the event object (already serialised). */
function fileLine(record: OutRecord): string {
  const head = JSON.stringify({ topic: record.topic, key: record.key, headers: record.headers });
  return `${head.slice(0, -1)},"value":${record.value}}\n`;
}
