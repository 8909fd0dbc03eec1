/**
 * Issue 9, items 8 and 9: multipart text parts are as strict about UTF-8 as a text/plain body,
 * file names lose their control characters, a deeply nested admin body is a 400, and the
 * Host header cannot make URL building quadratic.
 */
import request from 'supertest';
import { webhookUrl, withoutTrailingSlashes } from '../../src/registry/records';
import { ADMIN_TOKEN, testApp } from '../helpers/app';
import { expectError, hookUrl, triggerInput } from '../helpers/http';

const BOUNDARY = 'igw-boundary';

function multipart(parts: Array<{ headers: string; data: Buffer | string }>): Buffer {
  const pieces: Buffer[] = [];
  for (const part of parts) pieces.push(Buffer.from(`--${BOUNDARY}\r\n${part.headers}\r\n\r\n`), Buffer.from(part.data), Buffer.from('\r\n'));
  pieces.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(pieces);
}

const INVALID_UTF8 = Buffer.from([0x61, 0x62, 0xff, 0xfe, 0x63, 0x64]); // "ab", two stray bytes, "cd"

describe('multipart text parts and file names (issue 9, item 8)', () => {
  const t = testApp();
  beforeAll(() => t.addTrigger('mp', triggerInput()));
  const post = (body: Buffer) =>
    request(t.app).post(hookUrl('mp')).set('Content-Type', `multipart/form-data; boundary=${BOUNDARY}`).send(body);

  it('answers 400 invalid_encoding for a text part with invalid UTF-8, like the same bytes as text/plain', async () => {
    const before = t.sink.records.length;
    const res = await post(multipart([{ headers: 'Content-Disposition: form-data; name="note"', data: INVALID_UTF8 }]));
    expect(expectError(res, 'BAD_REQUEST').details).toEqual({ reason: 'invalid_encoding', field: 'note' });
    const plain = await request(t.app).post(hookUrl('mp')).set('Content-Type', 'text/plain').send(INVALID_UTF8);
    expect(expectError(plain, 'BAD_REQUEST').details.reason).toBe('invalid_encoding');
    expect(t.sink.records).toHaveLength(before);
  });

  it('also when the part declares charset=utf-8', async () => {
    const res = await post(multipart([{ headers: 'Content-Disposition: form-data; name="note"\r\nContent-Type: text/plain; charset=utf-8', data: INVALID_UTF8 }]));
    expect(expectError(res, 'BAD_REQUEST').details.reason).toBe('invalid_encoding');
  });

  it('still accepts valid UTF-8 and a part in the latin1 it declares', async () => {
    const res = await post(
      multipart([
        { headers: 'Content-Disposition: form-data; name="utf8"', data: 'ünïcödé ✓' },
        { headers: 'Content-Disposition: form-data; name="latin"\r\nContent-Type: text/plain; charset=iso-8859-1', data: Buffer.from([0x63, 0x61, 0x66, 0xe9]) },
      ]),
    );
    expect(res.status).toBe(200);
    expect(t.sink.events().at(-1)!.data.input).toEqual({ utf8: 'ünïcödé ✓', latin: 'café' });
  });

  it('drops control characters from file names', async () => {
    const res = await post(
      multipart([
        {
          // RFC 5987 extended notation, which busboy decodes: the name has a real CR LF.
          headers: "Content-Disposition: form-data; name=\"doc\"; filename*=utf-8''passwd%0D%0AX-Evil%3A%201\r\nContent-Type: text/plain",
          data: 'x',
        },
        { headers: "Content-Disposition: form-data; name=\"doc2\"; filename*=utf-8''a%00b%1Bc%7Fd%C2%85.txt", data: 'y' },
      ]),
    );
    expect(res.status).toBe(200);
    const input = t.sink.events().at(-1)!.data.input;
    expect(input.doc.name).toBe('passwdX-Evil: 1');
    expect(input.doc2.name).toBe('abcd.txt');
  });
});

describe('admin bodies and the Host header (issue 9, item 9)', () => {
  const t = testApp();
  const auth = { Authorization: `Bearer ${ADMIN_TOKEN}` };

  it('answers 400, not 500, for a trigger whose response.body nests 10,000 levels deep', async () => {
    const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    const body = `{"workflowId":"wf","workspaceId":"ws","deployed":true,"response":{"status":200,"body":${deep}}}`;
    const res = await request(t.admin).put('/admin/triggers/deep').set(auth).set('Content-Type', 'application/json').send(body);
    expect(expectError(res, 'BAD_REQUEST').details.reason).toBe('invalid_json');
    expect(await t.registry.triggers.get('deep')).toBeUndefined();
  });

  it('still stores a response.body of ordinary depth', async () => {
    const res = await request(t.admin)
      .put('/admin/triggers/shallow')
      .set(auth)
      .send(triggerInput({ response: { status: 202, body: { a: [{ b: { c: [1, 2, 3] } }] } } }));
    expect(res.status).toBe(200);
    expect(res.body.data.response.body).toEqual({ a: [{ b: { c: [1, 2, 3] } }] });
  });

  it('builds the public URL in linear time from a Host header of 100,000 slashes', () => {
    const host = `http://${'/'.repeat(100_000)}x${'/'.repeat(100_000)}`;
    const started = performance.now();
    const url = webhookUrl(host, 'p');
    // The old /\/+$/ took 191 ms for 16k slashes and grows with their square (about 7 s here).
    expect(performance.now() - started).toBeLessThan(500);
    expect(url).toBe(`${host.slice(0, host.lastIndexOf('x') + 1)}/api/webhooks/trigger/p`);
    expect(withoutTrailingSlashes('https://h.example///')).toBe('https://h.example');
    expect(withoutTrailingSlashes('///')).toBe('');
  });

  it('answers an admin read with a slash-filled Host header quickly', async () => {
    await request(t.admin).put('/admin/triggers/hosted').set(auth).send(triggerInput());
    const res = await request(t.admin).get('/admin/triggers/hosted').set(auth).set('Host', `h${'/'.repeat(12_000)}x`);
    expect(res.status).toBe(200);
    expect(res.body.data.url).toMatch(/x:8080\/api\/webhooks\/trigger\/hosted$/);
  });
});
