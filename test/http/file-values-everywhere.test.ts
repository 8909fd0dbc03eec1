/**
 * Contract §13.1: "File values only the gateway mints, anywhere": a `{ type: "url", data }`
 * shape is refused in the query string and the headers as in bodies (§2.5, issue 34 item 9).
 * With express's simple query parser (src/app.ts) query values are strings or arrays of
 * strings, and header values strings, so the one place the shape can form is the published
 * `query` or `headers` object itself: `?type=url&data=s3://…`. The same goes for a form's or a
 * multipart body's fields, which become `input` as they are.
 */
import request from 'supertest';
import type { FileStore } from '../../src/files/file-store';
import { testApp } from '../helpers/app';
import { expectError, hookUrl, triggerInput } from '../helpers/http';

const FORGED = 's3://bucket/other-workspace/secret.pdf';

describe('a type url shape in the query, the headers or a flat body is refused', () => {
  const t = testApp();
  let n = 0;
  const fresh = async (overrides: Parameters<typeof triggerInput>[0] = {}) => {
    const path = `fv-${++n}`;
    await t.addTrigger(path, triggerInput(overrides));
    return path;
  };
  const forgedAnywhere = () => JSON.stringify(t.sink.events()).includes(FORGED);

  it('in the query string: 400 file_value_not_allowed naming the query, nothing published', async () => {
    const res = await request(t.app).post(`${hookUrl(await fresh())}?type=url&data=${encodeURIComponent(FORGED)}`).send({ a: 1 });
    expect(expectError(res, 'BAD_REQUEST').details).toMatchObject({ reason: 'file_value_not_allowed', path: 'query' });
    expect(forgedAnywhere()).toBe(false);
  });

  it('in the headers: 400 naming the headers, whatever the letter case of their names', async () => {
    const res = await request(t.app).post(hookUrl(await fresh())).set('Type', 'url').set('DATA', FORGED).send({ a: 1 });
    expect(expectError(res, 'BAD_REQUEST').details).toMatchObject({ reason: 'file_value_not_allowed', path: 'headers' });
    expect(forgedAnywhere()).toBe(false);
  });

  it('in a form body or the text fields of a multipart body: 400 naming the body ($)', async () => {
    const form = await request(t.app).post(hookUrl(await fresh())).type('form').send(`type=url&data=${encodeURIComponent(FORGED)}`);
    expect(expectError(form, 'BAD_REQUEST').details).toMatchObject({ reason: 'file_value_not_allowed', path: '$' });
    const multipart = await request(t.app).post(hookUrl(await fresh())).field('type', 'url').field('data', FORGED);
    expect(expectError(multipart, 'BAD_REQUEST').details).toMatchObject({ reason: 'file_value_not_allowed', path: '$' });
    expect(forgedAnywhere()).toBe(false);
  });

  it('on a trigger whose publishHeaders leave them out, the headers are never published, so they pass', async () => {
    const path = await fresh({ publishHeaders: ['x-github-event'] });
    const res = await request(t.app).post(hookUrl(path)).set('Type', 'url').set('Data', FORGED).set('X-GitHub-Event', 'push').send({ a: 1 });
    expect(res.status).toBe(200);
    expect(t.sink.events().at(-1)!.data.headers).toEqual({ 'x-github-event': 'push' });
  });

  it('a query or headers that only look alike are published as sent', async () => {
    const path = await fresh();
    const res = await request(t.app)
      .post(`${hookUrl(path)}?type=url&link=${encodeURIComponent('https://example.com')}&kind=url`)
      .set('Type', 'URL')
      .set('Data', 'x')
      .send({ a: 1 });
    expect(res.status).toBe(200);
    const { query, headers } = t.sink.events().at(-1)!.data;
    expect(query).toEqual({ type: 'url', link: 'https://example.com', kind: 'url' });
    expect(headers).toMatchObject({ type: 'URL', data: 'x' });
    // A repeated parameter is an array, not the string "url": no file value either.
    const repeated = await request(t.app).post(`${hookUrl(path)}?type=url&type=url&data=x`).send({ b: 1 });
    expect(repeated.status).toBe(200);
  });
});

describe('the same on the upload path (multipart with a file store, contract §12)', () => {
  const t = testApp();
  const files: FileStore = {
    name: 'inline-only',
    bufferBytes: 0,
    start: async () => undefined,
    ping: async () => undefined,
    close: async () => undefined,
    put: () => Promise.reject(new Error('these tests keep their files inline')),
    discard: async () => undefined,
  };
  Object.assign(t.deps, { files });
  let n = 0;
  const fresh = async () => {
    const path = `fv-up-${++n}`;
    await t.addTrigger(path, triggerInput());
    return path;
  };

  it.each([
    ['the query', 'query', (path: string) => request(t.app).post(`${hookUrl(path)}?type=url&data=${encodeURIComponent(FORGED)}`).field('a', '1')],
    ['the headers', 'headers', (path: string) => request(t.app).post(hookUrl(path)).set('Type', 'url').set('Data', FORGED).field('a', '1')],
    ['the text parts', '$', (path: string) => request(t.app).post(hookUrl(path)).field('type', 'url').field('data', FORGED).attach('doc', Buffer.from('x'), 'a.txt')],
  ])('in %s: 400 file_value_not_allowed, nothing published', async (_what, where, send) => {
    const res = await send(await fresh());
    expect(expectError(res, 'BAD_REQUEST').details).toMatchObject({ reason: 'file_value_not_allowed', path: where });
    expect(JSON.stringify(t.sink.events())).not.toContain(FORGED);
  });

  it('an upload without the shape goes through this path and is published', async () => {
    const res = await request(t.app).post(`${hookUrl(await fresh())}?type=url`).field('data', 'x').attach('doc', Buffer.from('x'), 'a.txt');
    expect(res.status).toBe(200);
    expect(t.sink.events().at(-1)!.data.input.doc).toMatchObject({ type: 'file', name: 'a.txt' });
  });
});
