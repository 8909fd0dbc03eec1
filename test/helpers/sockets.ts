/**
 * Real TCP clients for in-process tests that need what supertest cannot do: a body held open
 * half-sent, a body sent slowly, an upload far over the limit.
 */
import { once } from 'node:events';
import { createServer, request, type ClientRequest, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Listening {
  port: number;
  url: string;
  close(): Promise<void>;
}

/** Listens on a free port of 127.0.0.1 (`server` defaults to a plain http.Server around `app`). */
export async function listen(app: RequestListener, server: Server = createServer(app)): Promise<Listening> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface Answer {
  /** The status, or undefined when the connection failed first (then `error` says how). */
  status?: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
  error?: string;
}

export interface HeldUpload {
  /** Settles with the answer (or the connection's error); never rejects. */
  answer: Promise<Answer>;
  /** Whether the answer has arrived. */
  answered(): boolean;
  /** Every byte given to the socket has been written. */
  written: Promise<void>;
  destroy(): void;
}

/**
 * POSTs with `Content-Length: declaredBytes` and writes only `sentBytes` of the body, then
 * holds the connection open: a sender that pauses before its last bytes.
 */
export function holdUpload(
  port: number,
  path: string,
  headers: Record<string, string>,
  declaredBytes: number,
  sentBytes: number,
): HeldUpload {
  const req = request({
    host: '127.0.0.1',
    port,
    path,
    method: 'POST',
    agent: false,
    headers: { 'content-type': 'application/json', ...headers, 'content-length': String(declaredBytes) },
  });
  let done = false;
  const answer = readAnswer(req).then((a) => {
    done = true;
    return a;
  });
  const written = new Promise<void>((resolve) => req.write(Buffer.alloc(sentBytes, 0x20), () => resolve()));
  return { answer, answered: () => done, written, destroy: () => req.destroy() };
}

/** The answer to `req`, read to its end; a connection error is an answer without a status. */
export function readAnswer(req: ClientRequest): Promise<Answer> {
  return new Promise<Answer>((resolve) => {
    let settled = false;
    const settle = (answer: Answer) => {
      if (!settled) resolve(answer);
      settled = true;
    };
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      const finish = () => settle({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.on('end', finish);
      res.on('close', finish);
      res.on('error', finish);
    });
    req.on('error', (error: NodeJS.ErrnoException) => settle({ headers: {}, body: '', error: error.code ?? error.message }));
  });
}

/** Polls `condition` every 10 ms until it holds; throws after `timeoutMs` naming `what`. */
export async function waitFor(what: string, condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
