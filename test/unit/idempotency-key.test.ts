import { createHash } from 'node:crypto';
import { HttpError } from '../../src/http/errors';
import { resolveIdempotencyKey } from '../../src/ingest/idempotency-key';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const parts = { path: 'p', contentType: 'application/json', bodyHash: sha256('{"a":1}') };

describe('resolveIdempotencyKey', () => {
  it('takes the Idempotency-Key header first, trimmed', () => {
    expect(resolveIdempotencyKey({ 'idempotency-key': ' k1 ', 'webhook-id': 'w' }, { id: 'b' }, 'id', parts)).toEqual({ value: 'k1', explicit: true });
  });

  it.each(['webhook-id', 'svix-id', 'x-github-delivery', 'x-shopify-webhook-id', 'x-gitlab-event-uuid'])('then a delivery id: %s', (name) => {
    expect(resolveIdempotencyKey({ [name]: 'd-1' }, { id: 'b' }, 'id', parts)).toEqual({ value: 'd-1', explicit: true });
  });

  it('uses the first value of a repeated header, and ignores an empty one', () => {
    expect(resolveIdempotencyKey({ 'idempotency-key': ['a', 'b'] }, {}, undefined, parts).value).toBe('a');
    expect(resolveIdempotencyKey({ 'idempotency-key': '  ', 'webhook-id': 'w' }, {}, undefined, parts).value).toBe('w');
  });

  it('then keyField, a dot path to a string or number', () => {
    expect(resolveIdempotencyKey({}, { evt: { id: 'x-1' } }, 'evt.id', parts)).toEqual({ value: 'x-1', explicit: true });
    expect(resolveIdempotencyKey({}, { seq: 7 }, 'seq', parts)).toEqual({ value: '7', explicit: true });
  });

  it('falls back to a fingerprint of path, content type and raw body (through its hash)', () => {
    const expected = sha256(`p\napplication/json\n${sha256('{"a":1}')}`);
    expect(resolveIdempotencyKey({}, { a: 1 }, undefined, parts)).toEqual({ value: `fp:${expected}`, explicit: false });
    // keyField that is missing, an object, or reached through the prototype chain → fingerprint
    for (const [body, field] of [[{ a: 1 }, 'id'], [{ id: { x: 1 } }, 'id'], [{}, 'constructor.name'], ['text', 'length'], [null, 'a']] as const) {
      expect(resolveIdempotencyKey({}, body, field, parts).explicit).toBe(false);
    }
  });

  it('fingerprints differ by path, content type and body', () => {
    const base = resolveIdempotencyKey({}, {}, undefined, parts).value;
    expect(resolveIdempotencyKey({}, {}, undefined, { ...parts, path: 'q' }).value).not.toBe(base);
    expect(resolveIdempotencyKey({}, {}, undefined, { ...parts, contentType: 'text/plain' }).value).not.toBe(base);
    expect(resolveIdempotencyKey({}, {}, undefined, { ...parts, bodyHash: sha256('{"a":2}') }).value).not.toBe(base);
    expect(resolveIdempotencyKey({}, {}, undefined, { ...parts }).value).toBe(base);
  });

  it('refuses an explicit key over 255 characters with a 400', () => {
    expect(resolveIdempotencyKey({ 'idempotency-key': 'k'.repeat(255) }, {}, undefined, parts).value).toHaveLength(255);
    let error: unknown;
    try {
      resolveIdempotencyKey({ 'x-github-delivery': 'k'.repeat(256) }, {}, undefined, parts);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(HttpError);
    expect((error as HttpError).status).toBe(400);
    expect((error as HttpError).message).toContain('x-github-delivery');
  });
});
