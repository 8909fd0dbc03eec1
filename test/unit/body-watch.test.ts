/**
 * Bodies being read share one timer (src/ingest/body-watch.ts) for their deadline and minimum
 * rate, instead of two timers each.
 */
import { PassThrough } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { readRawBody } from '../../src/ingest/read-body';
import type { BodyLease } from '../../src/ingest/body-budget';

const lease: BodyLease = { take: () => undefined, release: () => undefined } as unknown as BodyLease;
const timers = () => process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length;

function pendingRequest(): IncomingMessage {
  const req = new PassThrough() as unknown as IncomingMessage;
  req.headers = {};
  return req;
}

describe('the bodies being read', () => {
  it('share one timer however many are read at once, and it stops when none is', async () => {
    const before = timers();
    const requests = Array.from({ length: 50 }, pendingRequest);
    const reads = requests.map((req) => readRawBody(req, { limit: 1024, lease, minRate: { limit: 1, windowSeconds: 5 }, timeoutMs: 15_000 }));
    expect(timers() - before).toBe(1);
    for (const req of requests) (req as unknown as PassThrough).end('{}');
    await expect(Promise.all(reads)).resolves.toHaveLength(50);
    await new Promise<void>((resolve) => {
      const poll = () => (timers() === before ? resolve() : setImmediate(poll));
      poll();
    });
    expect(timers()).toBe(before);
  });

  it('a body that has not ended by its deadline is refused with request_timeout', async () => {
    const read = readRawBody(pendingRequest(), { limit: 1024, lease, minRate: { limit: 1, windowSeconds: 60 }, timeoutMs: 100 });
    await expect(read).rejects.toMatchObject({ reason: 'request_timeout' });
  });
});
