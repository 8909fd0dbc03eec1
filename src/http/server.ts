import { createServer, IncomingMessage, ServerResponse, type RequestListener, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { clientErrorListener } from './client-error';
import { whenClosed } from './response-done';

/** Longer than common load balancers' idle timeout (AWS ALB: 60 s), so they close first. */
const KEEP_ALIVE_MS = 65_000;

/** The listeners' section of the settings (the container builds it from HEADERS_TIMEOUT_MS and REQUEST_TIMEOUT_MS). */
export interface HttpServerSettings {
  /** A request's headers must have arrived within this. */
  headersTimeoutMs: number;
  /** The whole request must have arrived within this. */
  requestTimeoutMs: number;
}

export interface HttpServer {
  server: Server;
  /**
   * At shutdown (call it repeatedly): closes idle connections, and those that have been
   * sending a request's headers for longer than HEADERS_TIMEOUT_MS. Node stops enforcing
   * headersTimeout once the server is closing, so a sender dribbling headers would otherwise
   * hold the drain until the grace runs out.
   */
  closeStalledConnections(): void;
}

/**
 * An HTTP server with the gateway's timeouts: headers within HEADERS_TIMEOUT_MS, the whole
 * request within REQUEST_TIMEOUT_MS (both below SHUTDOWN_GRACE_MS, checked at start). Node
 * enforces both only when it sweeps its connections, every 30 s by default; the sweep runs
 * often enough here that a timeout is enforced within a second of expiring.
 */
export function createHttpServer(settings: HttpServerSettings, app: RequestListener, onTimeout: () => void = () => undefined): HttpServer {
  const server = createServer(
    {
      headersTimeout: settings.headersTimeoutMs,
      requestTimeout: settings.requestTimeoutMs,
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(settings.headersTimeoutMs / 4))),
      keepAliveTimeout: KEEP_ALIVE_MS,
      ...bornWithPrototypes(app),
    },
    app,
  );
  server.on('clientError', clientErrorListener(onTimeout));

  // Per connection: how many of its requests the app is handling, and since when it has had none.
  const connections = new Map<Socket, { inApp: number; waitingSince: number }>();
  server.on('connection', (socket: Socket) => {
    connections.set(socket, { inApp: 0, waitingSince: Date.now() });
    socket.once('close', () => connections.delete(socket));
  });
  server.on('request', (req, res) => {
    const state = connections.get(req.socket);
    if (!state) return;
    state.inApp++;
    whenClosed(res, () => {
      if (--state.inApp === 0) state.waitingSince = Date.now();
    });
  });
  return {
    server,
    closeStalledConnections() {
      server.closeIdleConnections();
      const stalledBefore = Date.now() - settings.headersTimeoutMs;
      for (const [socket, state] of connections) if (state.inApp === 0 && state.waitingSince < stalledBefore) socket.destroy();
    },
  };
}

type Prototyped = { request?: object; response?: object };

/**
 * An express app's requests and responses born with its prototypes: express (and the webhook
 * entry, src/http/app-entry.ts) give every request and response the app's prototypes with
 * `Object.setPrototypeOf`, 2-5 µs a request on Node 24 (two calls) and far more on Node 20 (the
 * embedded gateway's CPU per request fell 38 % there), a no-op when the object already has that
 * prototype. Subclasses, not functions calling Node's constructors: V8 sizes a
 * subclass's objects from its base constructor's fields, where a plain function's objects keep
 * Node's fields out of line (that version cost 23 % more CPU per request). The app's prototypes
 * become the subclasses', with the same chain and own properties (express's `app`).
 */
function bornWithPrototypes(app: RequestListener): { IncomingMessage?: typeof IncomingMessage; ServerResponse?: typeof ServerResponse } {
  const express = app as Prototyped;
  if (!express.request || !express.response) return {};
  class Request extends IncomingMessage {}
  class Response extends ServerResponse {}
  adopt(Request.prototype, express.request);
  adopt(Response.prototype, express.response);
  express.request = Request.prototype;
  express.response = Response.prototype;
  return { IncomingMessage: Request, ServerResponse: Response as typeof ServerResponse };
}

/** `target` takes `source`'s place: its prototype and its own properties (express's `app`). */
function adopt(target: object, source: object): void {
  Object.setPrototypeOf(target, Object.getPrototypeOf(source));
  for (const key of Reflect.ownKeys(source)) {
    if (key === 'constructor') continue;
    Object.defineProperty(target, key, Object.getOwnPropertyDescriptor(source, key)!);
  }
}
