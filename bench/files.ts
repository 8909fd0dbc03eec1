// The multipart scenario with one 5 MB file: the gateway with the file inline in the event
// (a data URL in the record) against the gateway with the file by reference (streamed to an
// S3-compatible store: moto's server, started here, as in the tests).
import { join } from 'node:path';
import { mkdtempSync } from 'node:fs';
import { S3TestServer, TEST_AWS_ENV } from '../test/helpers/s3-server';
import type { Target } from './targets';

export const FILE_BYTES = 5_000_000;
const BUCKET = 'igw-bench-files';

/**
 * Room for 5 MB files, many at once. The load generator is one client address on one route,
 * which the fair share of the body budget (MAX_INFLIGHT_BODY_SHARE) would hold to half the
 * budget: 429 `body_share_exceeded` is a tested behaviour, not this scenario's measurement.
 */
const room = {
  MAX_FILE_BYTES: String(8 * 1024 * 1024),
  MAX_INFLIGHT_BODY_BYTES: String(1024 * 1024 * 1024),
  MAX_INFLIGHT_BODY_SHARE: '100',
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
        S3_BUCKET: BUCKET,
        S3_ENDPOINT: s3.endpoint,
        S3_FORCE_PATH_STYLE: 'true',
      }),
    },
  ];
}
