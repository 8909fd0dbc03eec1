import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { testApp } from '../helpers/app';
import { expectError, expectRateLimitHeaders, hookUrl, triggerInput } from '../helpers/http';

interface FileValue {
  type: 'file';
  name: string;
  mime: string;
  size: number;
  data: string;
}

/** Checks the published file value's shape and that its data decodes to exactly `bytes`. */
function expectFile(value: FileValue, name: string, mime: string, bytes: Buffer): void {
  expect(Object.keys(value).sort()).toEqual(['data', 'mime', 'name', 'size', 'type']);
  expect(value).toMatchObject({ type: 'file', name, mime, size: bytes.length });
  const prefix = `data:${mime};base64,`;
  expect(value.data.startsWith(prefix)).toBe(true);
  const decoded = Buffer.from(value.data.slice(prefix.length), 'base64');
  expect(decoded.equals(bytes)).toBe(true);
}

describe('multipart/form-data (contract §2.5)', () => {
  const t = testApp();
  let n = 0;
  const fresh = async (extra: Parameters<typeof triggerInput>[0] = {}) => {
    const path = `mp-${++n}`;
    await t.addTrigger(path, triggerInput(extra));
    return path;
  };
  const lastInput = () => t.sink.events()[t.sink.events().length - 1].data.input;

  it('several file[] parts and text parts: files as file values (byte-exact), text as fields', async () => {
    const path = await fresh();
    const png = randomBytes(3000);
    const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(1500), Buffer.from([0, 0xff, 0x0d, 0x0a])]);
    const empty = Buffer.alloc(0);
    const res = await request(t.app)
      .post(hookUrl(path))
      .field('title', 'Quarterly report')
      .field('note', 'ünïcödé ✓')
      .attach('file[]', png, { filename: 'chart.png', contentType: 'image/png' })
      .attach('file[]', pdf, { filename: 'report.pdf', contentType: 'application/pdf' })
      .attach('file[]', empty, { filename: 'empty.txt', contentType: 'text/plain' });
    expect(res.status).toBe(200);
    const input = lastInput();
    expect(input.title).toBe('Quarterly report');
    expect(input.note).toBe('ünïcödé ✓');
    expect(Array.isArray(input.file)).toBe(true);
    expect(input.file).toHaveLength(3);
    expectFile(input.file[0], 'chart.png', 'image/png', png);
    expectFile(input.file[1], 'report.pdf', 'application/pdf', pdf);
    expectFile(input.file[2], 'empty.txt', 'text/plain', empty);
    expect(Object.keys(input).sort()).toEqual(['file', 'note', 'title']);
    expect(t.sink.events()[t.sink.events().length - 1].data.contentType).toMatch(/^multipart\/form-data; boundary=/);
  });

  it('a single file part stays a single value when not declared', async () => {
    const path = await fresh();
    const bytes = randomBytes(100);
    const res = await request(t.app).post(hookUrl(path)).attach('avatar', bytes, { filename: 'a.bin', contentType: 'application/octet-stream' });
    expect(res.status).toBe(200);
    expectFile(lastInput().avatar, 'a.bin', 'application/octet-stream', bytes);
  });

  it('a field declared file[] is an array even with a single part, with or without []', async () => {
    const path = await fresh({ inputFormat: [{ name: 'doc', type: 'file[]' }, { name: 'file', type: 'file[]' }] });
    const one = randomBytes(64);
    const two = randomBytes(65);
    const res = await request(t.app)
      .post(hookUrl(path))
      .attach('doc', one, { filename: 'one.bin', contentType: 'application/octet-stream' })
      .attach('file[]', two, { filename: 'two.jpg', contentType: 'image/jpeg' });
    expect(res.status).toBe(200);
    const input = lastInput();
    expect(input.doc).toHaveLength(1);
    expectFile(input.doc[0], 'one.bin', 'application/octet-stream', one);
    expect(input.file).toHaveLength(1);
    expectFile(input.file[0], 'two.jpg', 'image/jpeg', two);
  });

  it('a text value for a field declared file[] is a 400 naming the field', async () => {
    const path = await fresh({ inputFormat: [{ name: 'doc', type: 'file[]' }] });
    const res = await request(t.app).post(hookUrl(path)).field('doc', 'not a file');
    expect(expectError(res, 'BAD_REQUEST').details).toEqual({ reason: 'invalid_field', fields: [{ field: 'doc', expected: 'file[]' }] });
  });

  it('parts named x and x[] are collected into the array input.x, in order', async () => {
    const path = await fresh();
    const bytes = randomBytes(10);
    const res = await request(t.app)
      .post(hookUrl(path))
      .field('tag', 'a')
      .field('tag[]', 'b')
      .field('tag', 'c')
      .field('solo[]', 'only')
      .attach('mixed', bytes, { filename: 'm.bin', contentType: 'application/octet-stream' })
      .field('mixed', 'text too');
    expect(res.status).toBe(200);
    const input = lastInput();
    expect(input.tag).toEqual(['a', 'b', 'c']);
    expect(input.solo).toEqual(['only']);
    expect(input.mixed).toHaveLength(2);
    expect(input.mixed).toContainEqual('text too');
    expectFile(input.mixed.find((v: unknown) => typeof v === 'object'), 'm.bin', 'application/octet-stream', bytes);
  });

  it('coerces text parts with inputFormat', async () => {
    const path = await fresh({ inputFormat: [{ name: 'count', type: 'number' }, { name: 'ok', type: 'boolean' }] });
    const res = await request(t.app).post(hookUrl(path)).field('count', '12').field('ok', 'false');
    expect(res.status).toBe(200);
    expect(lastInput()).toEqual({ count: 12, ok: false });
  });

  it('__proto__, constructor and prototype parts change nothing', async () => {
    const path = await fresh();
    const res = await request(t.app)
      .post(hookUrl(path))
      .field('__proto__', 'x')
      .field('__proto__[]', 'y')
      .field('constructor', 'z')
      .field('prototype', 'w')
      .field('keep', '1')
      .attach('__proto__', Buffer.from('polluted'), { filename: 'p.txt', contentType: 'text/plain' })
      .attach('constructor', Buffer.from('polluted'), { filename: 'c.txt', contentType: 'text/plain' });
    expect(res.status).toBe(200);
    const input = lastInput();
    expect(input).toEqual({ keep: '1' });
    expect(Object.hasOwn(input, '__proto__')).toBe(false);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('keep');
    expect(t.sink.records[t.sink.records.length - 1].value).not.toContain('__proto__');
  });

  it('a truncated multipart body is a 400 with details', async () => {
    const path = await fresh();
    const body = '--XyZ\r\nContent-Disposition: form-data; name="a"\r\n\r\nhello';
    const res = await request(t.app).post(hookUrl(path)).set('Content-Type', 'multipart/form-data; boundary=XyZ').send(body);
    expect(expectError(res, 'BAD_REQUEST').details).toEqual({ reason: 'invalid_multipart', problem: expect.any(String) });
  });

  it('a file part sent as an attachment, not form-data, is a 400, not a 2xx without the file (RFC 7578 §4.2)', async () => {
    const path = await fresh();
    const body = '--XyZ\r\nContent-Disposition: attachment; name="doc"; filename="x.txt"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--XyZ--\r\n';
    const before = t.sink.records.length;
    const res = await request(t.app).post(hookUrl(path)).set('Content-Type', 'multipart/form-data; boundary=XyZ').send(body);
    expect(expectError(res, 'BAD_REQUEST').details).toEqual({ reason: 'invalid_multipart', problem: expect.stringContaining('form-data') });
    expect(t.sink.records).toHaveLength(before);
  });
});

describe('multipart limits answer 413 (contract §2.5)', () => {
  const t = testApp({ MAX_FILE_BYTES: '2000', MAX_FILES: '2', MAX_FIELDS: '3', MAX_RECORD_BYTES: '8192' });
  let n = 0;
  const fresh = async () => {
    const path = `lim-${++n}`;
    await t.addTrigger(path, triggerInput());
    return path;
  };

  it('a file over MAX_FILE_BYTES', async () => {
    const path = await fresh();
    const res = await request(t.app).post(hookUrl(path)).attach('file[]', randomBytes(2001), { filename: 'big.bin', contentType: 'application/octet-stream' });
    expect(expectError(res, 'PAYLOAD_TOO_LARGE').details).toEqual({ reason: 'file_too_large', limit: 'a file', max: 2000 });
    expectRateLimitHeaders(res);
  });

  it('a file of exactly MAX_FILE_BYTES is accepted', async () => {
    const path = await fresh();
    const bytes = randomBytes(2000);
    const res = await request(t.app).post(hookUrl(path)).attach('f', bytes, { filename: 'ok.bin', contentType: 'application/octet-stream' });
    expect(res.status).toBe(200);
    expectFile(t.sink.events()[t.sink.events().length - 1].data.input.f, 'ok.bin', 'application/octet-stream', bytes);
  });

  it('exactly MAX_FILES files and MAX_FIELDS text fields are accepted', async () => {
    const path = await fresh();
    const res = await request(t.app)
      .post(hookUrl(path))
      .field('a', '1')
      .field('b', '2')
      .field('c', '3')
      .attach('file[]', randomBytes(10), { filename: 'f0.bin', contentType: 'application/octet-stream' })
      .attach('file[]', randomBytes(10), { filename: 'f1.bin', contentType: 'application/octet-stream' });
    expect(res.status).toBe(200);
    const input = t.sink.events()[t.sink.events().length - 1].data.input;
    expect(Object.keys(input).sort()).toEqual(['a', 'b', 'c', 'file']);
    expect(input.file).toHaveLength(2);
  });

  it('more files than MAX_FILES', async () => {
    const path = await fresh();
    let req = request(t.app).post(hookUrl(path));
    for (let i = 0; i < 3; i++) req = req.attach('file[]', randomBytes(10), { filename: `f${i}.bin`, contentType: 'application/octet-stream' });
    const res = await req;
    expect(expectError(res, 'PAYLOAD_TOO_LARGE').details).toEqual({ reason: 'too_many_files', limit: 'the number of files', max: 2 });
  });

  it('more text fields than MAX_FIELDS', async () => {
    const path = await fresh();
    const res = await request(t.app).post(hookUrl(path)).field('a', '1').field('b', '2').field('c', '3').field('d', '4');
    expect(expectError(res, 'PAYLOAD_TOO_LARGE').details).toMatchObject({ limit: 'the number of fields' });
  });

  it('a published record over MAX_RECORD_BYTES (files are base64 in the record), and nothing is published', async () => {
    const path = await fresh();
    const before = t.sink.records.length;
    const res = await request(t.app)
      .post(hookUrl(path))
      .field('text', 'y'.repeat(2000))
      .attach('file[]', randomBytes(2000), { filename: 'a.bin', contentType: 'application/octet-stream' })
      .attach('file[]', randomBytes(2000), { filename: 'b.bin', contentType: 'application/octet-stream' });
    expect(expectError(res, 'PAYLOAD_TOO_LARGE').details).toEqual({ reason: 'record_too_large', limit: 'the published record' });
    expect(t.sink.records).toHaveLength(before);
  });
});
