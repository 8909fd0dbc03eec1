/**
 * Streams a multipart/form-data request to a server without holding the body in memory: a
 * file part is written slice by slice from one shared buffer (repeated as often as needed),
 * waiting for 'drain', so a test can send many large files at once from a small process.
 */
import { createHash } from 'node:crypto';
import { request } from 'node:http';

export type Part =
  | { name: string; value: string }
  | { name: string; filename: string; mime: string; source: Buffer; size: number };

export interface StreamedResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

export interface StreamOptions {
  headers?: Record<string, string>;
  /** The same boundary makes the same bytes (a fingerprint duplicate); random otherwise. */
  boundary?: string;
  /** Awaited before each slice is written, with the body bytes sent so far (pause a test here). */
  beforeSlice?(sent: number): Promise<void> | void;
}

const SLICE = 64 * 1024;

/** sha256 of `size` bytes of `source` repeated, as a file part sends them. */
export function repeatedSha256(source: Buffer, size: number): string {
  const hash = createHash('sha256');
  for (let at = 0; at < size; at += source.length) hash.update(source.subarray(0, Math.min(source.length, size - at)));
  return hash.digest('hex');
}

export function postMultipartStream(url: string, parts: Part[], options: StreamOptions = {}): Promise<StreamedResponse> {
  const boundary = options.boundary ?? `----igw-test-${Math.random().toString(16).slice(2)}`;
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = request(url, {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, ...options.headers },
    });
    req.on('response', (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
      });
      res.on('error', reject);
    });
    req.on('error', (error) => {
      if (!answered) reject(error);
    });

    const write = (data: Buffer | string) =>
      new Promise<void>((done) => {
        if (answered || req.destroyed) return done();
        if (req.write(data)) return done();
        const onDrain = () => {
          req.off('close', onDrain);
          done();
        };
        req.once('drain', onDrain);
        req.once('close', onDrain);
      });

    void (async () => {
      let sent = 0;
      for (const part of parts) {
        if ('value' in part) {
          await write(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`);
          continue;
        }
        await write(
          `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"; filename="${part.filename}"\r\nContent-Type: ${part.mime}\r\n\r\n`,
        );
        for (let at = 0; at < part.size && !answered; ) {
          await options.beforeSlice?.(sent);
          const offset = at % part.source.length;
          const length = Math.min(SLICE, part.size - at, part.source.length - offset);
          await write(part.source.subarray(offset, offset + length));
          at += length;
          sent += length;
        }
        await write('\r\n');
      }
      await write(`--${boundary}--\r\n`);
      if (!req.destroyed) req.end();
    })().catch(reject);
  });
}
