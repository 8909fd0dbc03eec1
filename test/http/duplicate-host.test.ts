/**
 * Issue 20 item 4: RFC 9112 §3.2, a request with more than one Host header is answered 400, on
 * both listeners. Sent over a raw socket: HTTP clients never write two Host headers.
 */
import { once } from 'node:events';
import { connect } from 'node:net';
import { httpServerSettings } from '../../src/container';
import { createHttpServer } from '../../src/http/server';
import { testApp } from '../helpers/app';
import { hookUrl, triggerInput } from '../helpers/http';
import { listen, type Listening } from '../helpers/sockets';

interface RawAnswer {
  status: number;
  headers: string;
  body: string;
}

/**
 * Writes `head` (and `body`) as is and reads until the server closes the connection (it answers
 * `Connection: close`). The socket is not half-closed: Node's server aborts a request whose
 * sender sent FIN.
 */
async function rawRequest(port: number, head: string[], body = ''): Promise<RawAnswer> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  socket.write([...head, `Content-Length: ${Buffer.byteLength(body)}`, '', body].join('\r\n'));
  const chunks: Buffer[] = [];
  for await (const chunk of socket) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  const [headers, ...rest] = text.split('\r\n\r\n');
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(headers)?.[1]), headers, body: rest.join('\r\n\r\n') };
}

function expectDuplicateHost(answer: RawAnswer): void {
  expect(answer.status).toBe(400);
  expect(answer.headers).toMatch(/^content-type: application\/json/im);
  expect(answer.headers).toMatch(/^x-request-id: \S+/im);
  expect(JSON.parse(answer.body)).toEqual({
    error: { code: 'BAD_REQUEST', message: expect.any(String), details: { reason: 'duplicate_host', header: 'Host' } },
  });
}

describe('two Host headers (RFC 9112 §3.2)', () => {
  const t = testApp();
  let pub: Listening;
  let admin: Listening;
  beforeAll(async () => {
    await t.addTrigger('dup-host', triggerInput());
    pub = await listen(t.app, createHttpServer(httpServerSettings(t.deps.config), t.app).server);
    admin = await listen(t.admin, createHttpServer(httpServerSettings(t.deps.config), t.admin).server);
  });
  afterAll(async () => {
    await pub.close();
    await admin.close();
  });

  it('public listener: 400 duplicate_host, nothing published', async () => {
    const head = [`POST ${hookUrl('dup-host')} HTTP/1.1`, 'Host: a.example', 'Host: b.example', 'Content-Type: application/json'];
    expectDuplicateHost(await rawRequest(pub.port, head, '{"a":1}'));
    expect(t.sink.records).toHaveLength(0);
  });

  it('also when the copies differ only in case or are equal', async () => {
    expectDuplicateHost(await rawRequest(pub.port, ['GET /healthz HTTP/1.1', 'Host: a.example', 'host: a.example']));
    expectDuplicateHost(await rawRequest(pub.port, ['GET /healthz HTTP/1.1', 'HOST: a.example', 'Host: c.example']));
  });

  it('admin listener: 400 duplicate_host', async () => {
    expectDuplicateHost(await rawRequest(admin.port, ['GET /readyz HTTP/1.1', 'Host: a.example', 'Host: b.example']));
  });

  it('one Host header is served as before', async () => {
    const answer = await rawRequest(pub.port, [`POST ${hookUrl('dup-host')} HTTP/1.1`, 'Host: a.example', 'Content-Type: application/json', 'Connection: close'], '{"a":1}');
    expect(answer.status).toBe(200);
    expect(t.sink.records).toHaveLength(1);
  });
});
