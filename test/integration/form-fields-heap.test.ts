/**
 * Issue 9, item 1: a URL-encoded body is refused at MAX_FIELDS + 1 pairs, not after decoding
 * all of them. Decoding a 0.99 MB `a&a&…` first took about 23 MB; the same 16 times over
 * (about 370 MB) exceeds a 96 MB heap, and the process died of it (V8 aborts on a full heap).
 * The body read whole and its 16 MB of text fit beside the process's own 30-40 MB. The heap
 * was 48 MB until CI beside stress-ng saw the connection closed without an answer, once in
 * about 25 runs (its cause not seen; a heap that tight was the likeliest).
 */
import { join } from 'node:path';
import { startGateway, type RunningGateway } from '../helpers/server';
import { tempDir, writeJson } from '../helpers/tmp';

const MiB = 1024 * 1024;

describe('form bodies stop at MAX_FIELDS', () => {
  const tmp = tempDir();
  let gateway: RunningGateway;

  beforeAll(async () => {
    gateway = await startGateway({
      NODE_OPTIONS: '--max-old-space-size=96',
      TRIGGERS_FILE: writeJson(tmp.dir, 'triggers.json', { triggers: { form: { workflowId: 'wf', workspaceId: 'ws', deployed: true } } }),
      EVENTS_DIR: join(tmp.dir, 'events'),
      MAX_BODY_BYTES: String(16 * MiB),
      MAX_RECORD_BYTES: String(16 * MiB),
      MAX_INFLIGHT_BODY_BYTES: String(64 * MiB),
    });
  });

  afterAll(async () => {
    await gateway?.stop('SIGKILL');
    tmp.cleanup();
  });

  it('answers a 16 MB a&a&… form with 413 too_many_fields in a 96 MB heap, and keeps serving', async () => {
    const res = await fetch(`${gateway.url}/api/webhooks/trigger/form`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'a&'.repeat(8 * MiB),
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { details: unknown } }).error.details).toMatchObject({ reason: 'too_many_fields', max: 200 });
    expect((await fetch(`${gateway.url}/healthz`)).status).toBe(200);
    expect(gateway.child.exitCode).toBeNull();
  });
});
