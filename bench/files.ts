// The large-payload scenarios (a 5 MB file, a 6 MB JSON body): the gateway with the payload
// inline in the event (a data URL, or the body's fields, in the record) against the gateway with
// it by reference (streamed to an S3-compatible store: moto's server, started here, as in the
// tests; a JSON body over MAX_RECORD_BYTES goes by the claim check).
import { join } from 'node:path';
import { mkdtempSync } from 'node:fs';
import { S3TestServer, TEST_AWS_ENV } from '../test/helpers/s3-server';
import type { Target } from './targets';

const BUCKET = 'igw-bench-files';

/**
 * Room for 5 MB files and 6 MB bodies, many at once. No fair-share override: a streamed upload
 * counts only the part buffers it holds, so one client's concurrent uploads fit its share.
 */
const room = {
  MAX_FILE_BYTES: String(8 * 1024 * 1024),
  MAX_INFLIGHT_BODY_BYTES: String(1024 * 1024 * 1024),
};

export async function startFileStore(): Promise<S3TestServer> {
  const s3 = await S3TestServer.start();
  await s3.createBucket(BUCKET);
  return s3;
}

export function fileTargets(work: string, unlimited: Record<string, string>, s3: S3TestServer, root: string): Target[] {
  const events = () => mkdtempSync(join(work, 'events-'));
  return [
    { name: 'floor (bare express 5)', script: join(root, 'dist-bench', 'bench', 'floor.js'), env: () => ({}) },
    {
      name: 'gateway, embedded, file inline',
      script: join(root, 'dist', 'main.js'),
      // Inline, the whole body must fit a record: a 5 MB file is a 6.7 MB data URL.
      env: () => ({
        ...unlimited,
        ...room,
        EVENTS_DIR: events(),
        MAX_BODY_BYTES: String(8 * 1024 * 1024),
        MAX_RECORD_BYTES: String(16 * 1024 * 1024),
        BATCH_MAX_BYTES: String(64 * 1024 * 1024),
      }),
    },
    {
      name: 'gateway, embedded, file by reference (S3)',
      script: join(root, 'dist', 'main.js'),
      env: () => ({
        ...unlimited,
        ...room,
        ...TEST_AWS_ENV,
        EVENTS_DIR: events(),
        // Over MAX_RECORD_BYTES (1 MB): a JSON body this large goes by reference (the claim check).
        MAX_BODY_BYTES: String(8 * 1024 * 1024),
        S3_BUCKET: BUCKET,
        S3_ENDPOINT: s3.endpoint,
        S3_FORCE_PATH_STYLE: 'true',
      }),
    },
  ];
}
