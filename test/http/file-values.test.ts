/**
 * Issue 20 item 2, contract §2.5 "only the gateway mints file values": a field declared
 * `file[]` fed from JSON, a form or a text part may carry inline `data:` file values, never a
 * `type: "url"` value or another scheme, which would be published as if the gateway had stored
 * the object (another tenant's s3:// key, the cloud metadata endpoint).
 */
import request from 'supertest';
import { testApp } from '../helpers/app';
import { expectError, hookUrl, triggerInput } from '../helpers/http';

const MAX_FILE_BYTES = 1024;

describe('file values a sender may not mint', () => {
  const t = testApp({ MAX_FILE_BYTES: String(MAX_FILE_BYTES) });
  let n = 0;
  const fresh = async () => {
    const path = `fv-${++n}`;
    await t.addTrigger(path, triggerInput({ inputFormat: [{ name: 'doc', type: 'file[]' }] }));
    return path;
  };
  const postJson = async (doc: unknown) => request(t.app).post(hookUrl(await fresh())).send({ doc });

  it.each([
    ["another tenant's object", { type: 'url', data: 's3://bucket/other-workspace/p/2026-01-01/e/1-secret.pdf', name: 'a.pdf', mime: 'application/pdf', size: 1 }, '$.doc'],
    ['the cloud metadata endpoint', { type: 'url', data: 'http://169.254.169.254/latest/meta-data/iam/security-credentials/' }, '$.doc'],
    ['type url in an array with a good file', [{ type: 'file', data: 'data:text/plain;base64,YQ==' }, { type: 'url', data: 's3://b/k' }], '$.doc[1]'],
  ])('JSON: %s → 400 file_value_not_allowed naming its path, nothing published', async (_, doc, path) => {
    const before = t.sink.records.length;
    const res = await postJson(doc);
    expect(expectError(res, 'BAD_REQUEST').details).toMatchObject({ reason: 'file_value_not_allowed', path });
    expect(t.sink.records).toHaveLength(before);
  });

  it.each([
    ['a file value with an s3: data', { type: 'file', data: 's3://bucket/key' }],
    ['a file value with an http: data', { type: 'file', data: 'http://169.254.169.254/latest/meta-data/' }],
    ['a file value with a file: data', { type: 'file', data: 'file:///etc/passwd' }],
    ['a file value with a protocol-relative data', { type: 'file', data: '//evil.example/x' }],
  ])('JSON: %s → 400 file_value_not_allowed, nothing published', async (_, doc) => {
    const before = t.sink.records.length;
    const res = await postJson(doc);
    expect(expectError(res, 'BAD_REQUEST').details).toMatchObject({ reason: 'file_value_not_allowed', field: 'doc' });
    expect(t.sink.records).toHaveLength(before);
  });

  it('form and multipart text parts: a type url value sent as JSON text is refused the same way', async () => {
    const forged = JSON.stringify({ type: 'url', data: 's3://bucket/other/key' });
    const form = await request(t.app).post(hookUrl(await fresh())).type('form').send({ doc: forged });
    expect(expectError(form, 'BAD_REQUEST').details).toMatchObject({ reason: 'file_value_not_allowed', path: '$.doc' });
    const part = await request(t.app).post(hookUrl(await fresh())).field('doc', forged);
    expect(expectError(part, 'BAD_REQUEST').details).toMatchObject({ reason: 'file_value_not_allowed', path: '$.doc' });
  });

  it('an inline data: file value that decodes and fits is published (its name cleaned)', async () => {
    const doc = { type: 'file', name: 'a\u202Etxt.exe', mime: 'text/plain', size: 5, data: `data:text/plain;base64,${Buffer.from('hello').toString('base64')}` };
    const res = await postJson(doc);
    expect(res.status).toBe(200);
    expect(t.sink.events().at(-1)!.data.input.doc).toEqual([{ ...doc, name: 'atxt.exe' }]);
    const form = await request(t.app).post(hookUrl(await fresh())).type('form').send({ doc: JSON.stringify(doc) });
    expect(form.status).toBe(200);
  });

  it('an inline value over MAX_FILE_BYTES → 413 file_too_large', async () => {
    const res = await postJson({ type: 'file', data: `data:application/octet-stream;base64,${Buffer.alloc(MAX_FILE_BYTES + 1).toString('base64')}` });
    expect(expectError(res, 'PAYLOAD_TOO_LARGE').details).toMatchObject({ reason: 'file_too_large', max: MAX_FILE_BYTES, field: 'doc' });
    const exact = await postJson({ type: 'file', data: `data:application/octet-stream;base64,${Buffer.alloc(MAX_FILE_BYTES).toString('base64')}` });
    expect(exact.status).toBe(200);
  });

  it.each([
    ['base64 that does not decode', 'data:text/plain;base64,@@@@'],
    ['unpadded base64', 'data:text/plain;base64,YQ'],
  ])('%s → 400 invalid_field', async (_, data) => {
    const res = await postJson({ type: 'file', data });
    expect(expectError(res, 'BAD_REQUEST').details).toEqual({ reason: 'invalid_field', fields: [{ field: 'doc', expected: 'file[]' }] });
  });

  it('a size that is not the decoded size → 400 invalid_field', async () => {
    const res = await postJson({ type: 'file', size: 1, data: `data:text/plain;base64,${Buffer.from('hello').toString('base64')}` });
    expect(expectError(res, 'BAD_REQUEST').details).toEqual({ reason: 'invalid_field', fields: [{ field: 'doc', expected: 'file[]' }] });
  });

  it("the gateway's own multipart file parts still pass", async () => {
    const res = await request(t.app).post(hookUrl(await fresh())).attach('doc', Buffer.from('%PDF'), { filename: 'a.pdf', contentType: 'application/pdf' });
    expect(res.status).toBe(200);
    expect(t.sink.events().at(-1)!.data.input.doc).toEqual([{ type: 'file', name: 'a.pdf', mime: 'application/pdf', size: 4, data: 'data:application/pdf;base64,JVBERg==' }]);
  });
});
