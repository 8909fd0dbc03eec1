import { createServer, type RequestListener, type Server } from 'node:http';
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
