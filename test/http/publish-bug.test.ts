/**
 * A bug on the publish path (a TypeError thrown by the sink) is a 500, never "send it again":
 * the batcher hands the sink's programming error to the caller as it is. A failure of what
 * the sink writes to (a PublishError) stays a 503 with Retry-After.
 */
import request from 'supertest';
import { PublishError } from '../../src/publish/errors';
import type { OutRecord } from '../../src/publish/sink';
import { testApp } from '../helpers/app';
import { expectError, hookUrl, triggerInput } from '../helpers/http';

describe('a bug in the sink', () => {
  const t = testApp();
  const write = t.sink.write.bind(t.sink);

  beforeAll(async () => {
    await t.addTrigger('bug', triggerInput());
  });

  afterEach(() => {
    t.sink.write = write;
  });

  it('is a 500 INTERNAL_ERROR without Retry-After, logged as an unexpected error; the claim is given back', async () => {
    t.sink.write = async (records: OutRecord[]) => {
      throw new TypeError(`Cannot read properties of undefined (reading '${records[0].topic}')`);
    };
    const res = await request(t.app).post(hookUrl('bug')).set('Idempotency-Key', 'bug-1').send({ n: 1 });
    expectError(res, 'INTERNAL_ERROR');
    expect(res.headers['retry-after']).toBeUndefined();
    expect(res.text).not.toContain('Cannot read properties');
    const errors = t.logLines.map((line) => JSON.parse(line) as { level: string; msg: string }).filter((l) => l.level === 'error');
    expect(errors.map((l) => l.msg)).toContain('unexpected error');

    t.sink.write = write;
    const again = await request(t.app).post(hookUrl('bug')).set('Idempotency-Key', 'bug-1').send({ n: 1 });
    expect(again.status).toBe(200);
  });

  it('while a failure of what the sink writes to stays a 503 with Retry-After', async () => {
    t.sink.write = async () => {
      throw new PublishError('unavailable', 'broker gone');
    };
    const res = await request(t.app).post(hookUrl('bug')).set('Idempotency-Key', 'bug-2').send({ n: 2 });
    expect(expectError(res, 'SERVICE_UNAVAILABLE').details).toEqual({ reason: 'sink_unavailable' });
    expect(res.headers['retry-after']).toMatch(/^\d+$/);
  });
});
