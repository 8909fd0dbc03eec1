/**
 * Issue 38: an answer's headers kept on the response and written with its status line in one
 * `writeHead` list (src/http/answer-headers.ts). Every header must arrive once, with the value
 * the last `keepHeader` or `setHeader` of its name gave it, whichever way the answer is written.
 */
import { get } from 'node:http';
import express, { type RequestHandler } from 'express';
import { keepHeader, keepHeaders, writeKeptHeaders } from '../../src/http/answer-headers';
import { sendJson } from '../../src/http/send-json';
import { listen, type Listening } from '../helpers/sockets';

/** The answer's header lines as sent (names lower-cased), without the ones Node adds itself. */
function headerLines(port: number, path: string): Promise<{ status: number; lines: Array<[string, string]> }> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path }, (res) => {
      const lines: Array<[string, string]> = [];
      for (let i = 0; i < res.rawHeaders.length; i += 2) lines.push([res.rawHeaders[i].toLowerCase(), res.rawHeaders[i + 1]]);
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, lines: lines.filter(([name]) => !['date', 'connection', 'keep-alive'].includes(name)) }));
    }).on('error', reject);
  });
}

describe('answer headers kept for one writeHead', () => {
  let listening: Listening | undefined;
  afterEach(async () => listening?.close());
  let storedBySetHeader: string[] | undefined;

  async function serve(handler: RequestHandler, keeping = true): Promise<number> {
    const app = express();
    app.disable('x-powered-by'); // as the gateway's apps do: express would set it first, with setHeader
    if (keeping) writeKeptHeaders(app.response);
    app.get('/', (req, res, next) => {
      handler(req, res, next);
      storedBySetHeader = res.getHeaderNames();
    });
    listening = await listen(app);
    return listening.port;
  }

  it('the acknowledgement\'s way: every header once, in order, none through setHeader', async () => {
    const port = await serve((_req, res) => {
      keepHeaders(res, ['X-Content-Type-Options', 'nosniff', 'Cache-Control', 'no-store']);
      keepHeader(res, 'X-Request-Id', 'req-1');
      keepHeader(res, 'cache-control', 'private'); // replaces the kept one, whatever its case
      keepHeader(res, 'X-Event-Id', 'ev-1');
      sendJson(res, 202, { ok: true });
    });
    const { status, lines } = await headerLines(port, '/');
    expect(status).toBe(202);
    expect(lines).toEqual([
      ['x-content-type-options', 'nosniff'],
      ['cache-control', 'private'],
      ['x-request-id', 'req-1'],
      ['x-event-id', 'ev-1'],
      ['content-type', 'application/json; charset=utf-8'],
      ['content-length', '11'],
    ]);
    expect(storedBySetHeader).toEqual([]); // the one list, not Node's header store
  });

  it('a header set after it was kept replaces it (an express answer)', async () => {
    const port = await serve((_req, res) => {
      keepHeaders(res, ['Cache-Control', 'no-store', 'X-Request-Id', 'req-2']);
      res.setHeader('Cache-Control', 'max-age=5');
      res.status(409).json({ a: 1 });
    });
    const { status, lines } = await headerLines(port, '/');
    expect(status).toBe(409);
    expect(lines.filter(([name]) => name === 'cache-control')).toEqual([['cache-control', 'max-age=5']]);
    expect(lines).toContainEqual(['x-request-id', 'req-2']);
    expect(lines).toContainEqual(['content-type', 'application/json; charset=utf-8']);
  });

  it('a header kept after it was set replaces it', async () => {
    const port = await serve((_req, res) => {
      res.setHeader('X-Thing', 'old');
      keepHeaders(res, ['X-Request-Id', 'req-3']);
      keepHeader(res, 'X-Thing', 'new');
      res.end();
    });
    const { lines } = await headerLines(port, '/');
    expect(lines.filter(([name]) => name === 'x-thing')).toEqual([['x-thing', 'new']]);
    expect(lines).toContainEqual(['x-request-id', 'req-3']);
  });

  it('headers given to writeHead win over kept ones, and the kept ones are still sent', async () => {
    const port = await serve((_req, res) => {
      keepHeaders(res, ['X-Request-Id', 'req-4', 'Cache-Control', 'no-store']);
      res.writeHead(201, { 'Cache-Control': 'private' });
      res.end();
    });
    const { status, lines } = await headerLines(port, '/');
    expect(status).toBe(201);
    expect(lines).toContainEqual(['x-request-id', 'req-4']);
    expect(lines.filter(([name]) => name === 'cache-control')).toEqual([['cache-control', 'private']]);
  });

  it('an app that does not write kept headers gets them set at once', async () => {
    const port = await serve((_req, res) => {
      keepHeaders(res, ['X-Request-Id', 'req-5']);
      keepHeader(res, 'X-Event-Id', 'ev-5');
      sendJson(res, 200, {});
    }, false);
    const { lines } = await headerLines(port, '/');
    expect(lines).toContainEqual(['x-request-id', 'req-5']);
    expect(lines).toContainEqual(['x-event-id', 'ev-5']);
    expect(storedBySetHeader).toEqual(expect.arrayContaining(['x-request-id', 'x-event-id']));
  });
});
