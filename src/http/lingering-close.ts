import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * How long a sender whose body was refused may go on sending before the connection is cut
 * (nginx's lingering close: lingering_timeout is 5 s). A time, never a byte count: a fast
 * sender finishes its upload and reads the answer, a slow one is cut all the same.
 */
export const LINGER_MS = 5000;

const lingering = new Set<Socket>();

/**
 * For an answer given before the request's body has arrived in full (a 413, a 401 or a 503
 * before or while reading it). Closing at once resets a connection whose unread bytes are
 * still arriving, and the reset can wipe the answer before the sender reads it: a sender that
 * never sees its 413 retries forever. So, as nginx does: answer with `Connection: close`,
 * half-close (FIN) once the answer is written, keep reading and dropping what still comes for
 * at most LINGER_MS, then close.
 */
export function closeAfterLinger(req: IncomingMessage, res: ServerResponse): void {
  res.setHeader('Connection', 'close');
  req.resume(); // flowing without a 'data' listener: the rest of the body is dropped
  // Node ends a `Connection: close` response with socket.destroySoon(): a FIN, then a destroy
  // as soon as the FIN is written. That destroy is the reset; this socket lingers instead.
  req.socket.destroySoon = function lingerThenClose(this: Socket) {
    lingerThenDestroy(this);
  };
}

/** Half-closes `socket` now (after what is queued) and destroys it after LINGER_MS, or when the peer closes. */
export function lingerThenDestroy(socket: Socket): void {
  if (lingering.has(socket)) return;
  if (socket.writable) socket.end();
  socket.resume();
  lingering.add(socket);
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => {
    clearTimeout(timer);
    lingering.delete(socket);
  });
}

/** At shutdown: refused senders are not waited for (they already have their answer). */
export function destroyLingeringSockets(): void {
  for (const socket of lingering) socket.destroy();
}
