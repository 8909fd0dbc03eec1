/**
 * Issue 22, item 1 (contract §5): a multipart upload sent again picks a new boundary (supertest,
 * like `curl -F`, draws one per request), so its bytes differ; its identity, the parts, does not.
 */
import request from 'supertest';
import { testApp } from '../helpers/app';
import { expectError, hookUrl, triggerInput } from '../helpers/http';

const pdf = Buffer.from('%PDF-1.7 quarterly numbers');

describe('a retried multipart upload (buffered path)', () => {
  const t = testApp();
  let n = 0;
  const fresh = async () => {
    const path = `mp-retry-${++n}`;
    await t.addTrigger(path, triggerInput());
    return path;
  };
  const recordsFor = (path: string) => t.sink.events().filter((e) => e.data.triggerPath === path);
  const upload = (path: string, file = pdf, key?: string) => {
    const req = request(t.app).post(hookUrl(path));
    if (key) req.set('Idempotency-Key', key);
    return req.field('title', 'report').attach('doc', file, { filename: 'report.pdf', contentType: 'application/pdf' });
  };

  it('with the same Idempotency-Key and a new boundary is replayed, not 409 key_reused', async () => {
    const path = await fresh();
    const first = await upload(path, pdf, 'upload-1');
    expect(first.status).toBe(200);
    const retry = await upload(path, pdf, 'upload-1');
    expect(retry.status).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.headers['x-event-id']).toBe(first.headers['x-event-id']);
    expect(recordsFor(path)).toHaveLength(1);
  });

  it('with the same key and another file is still 409 key_reused', async () => {
    const path = await fresh();
    expect((await upload(path, pdf, 'upload-2')).status).toBe(200);
    const other = await upload(path, Buffer.from('%PDF-1.7 other numbers'), 'upload-2');
    expect(expectError(other, 'CONFLICT').details).toEqual({ reason: 'key_reused' });
  });

  it('without a key: the fingerprint takes the parts, so the retry is a duplicate', async () => {
    const path = await fresh();
    const first = await upload(path);
    expect(first.status).toBe(200);
    const retry = await upload(path);
    expect(retry.status).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.headers['x-event-id']).toBe(first.headers['x-event-id']);
    expect(recordsFor(path)).toHaveLength(1);
  });
});
