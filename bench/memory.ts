import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { drive } from './load';
import type { NodeBinary } from './node-binaries';
import { sampleRss, startServer } from './processes';
import { BENCH_TOKEN, BENCH_TRIGGER, type Scenario } from './scenarios';

/** MAX_FILE_BYTES's default: every upload is a file at the size limit. */
const FILE_BYTES = 512 * 1024;
const BOUNDARY = 'benchmemoryboundary';
const file = Buffer.alloc(FILE_BYTES, 3);

const upload: Scenario = {
  name: 'upload at the file size limit',
  path: `/api/webhooks/trigger/${BENCH_TRIGGER}`,
  headers: { authorization: `Bearer ${BENCH_TOKEN}`, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
  request: (n) => ({
    body: Buffer.concat([
      Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="id"\r\n\r\n${n}\r\n`),
      Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="f.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`),
      file,
      Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
    ]),
    headers: { 'idempotency-key': `m-${n}` },
  }),
};

export interface MemoryRow {
  node: string;
  uploadsInFlight: number;
  rssIdleMiB: number;
  rssPeakMiB: number;
  ok: number;
  non2xx: number;
}

/**
 * Peak RSS of the embedded gateway while `n` uploads at the size limit are in flight at once,
 * for growing n: with the body budget the peak must level off instead of growing with n.
 */
export async function measureMemory(node: NodeBinary, work: string, env: Record<string, string>, seconds: number): Promise<MemoryRow[]> {
  const rows: MemoryRow[] = [];
  let firstId = Date.now();
  for (const uploadsInFlight of [1, 20, 100]) {
    const server = await startServer(node.path, join(__dirname, '..', '..', 'dist', 'main.js'), {
      ...env,
      EVENTS_DIR: mkdtempSync(join(work, 'memory-')),
    });
    try {
      await drive(server.port, upload, 1, 1, (firstId += 1_000_000)); // warm-up
      const idle = sampleRss(server.child.pid!).stop();
      const rss = sampleRss(server.child.pid!);
      const load = await drive(server.port, upload, seconds, uploadsInFlight, (firstId += 1_000_000));
      rows.push({ node: node.label, uploadsInFlight, rssIdleMiB: idle, rssPeakMiB: rss.stop(), ok: load.ok, non2xx: load.non2xx });
    } finally {
      await server.stop();
    }
  }
  return rows;
}

export function memoryTable(rows: MemoryRow[]): string {
  const lines = [
    `| node | uploads in flight | RSS idle MiB | RSS peak MiB | 2xx | non-2xx (503 past the body budget) |`,
    '|---|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) lines.push(`| ${r.node} | ${r.uploadsInFlight} | ${r.rssIdleMiB} | ${r.rssPeakMiB} | ${r.ok} | ${r.non2xx} |`);
  return lines.join('\n');
}
