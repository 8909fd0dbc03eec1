import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { Refusal } from '../outcomes/refusal';
import { errorBody } from './errors';
import { lingerThenDestroy } from './lingering-close';

/** Node's own answers to requests its parser refused (what it writes without a 'clientError' listener). */
const PARSER_STATUS: Record<string, number> = {
  HPE_HEADER_OVERFLOW: 431,
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 413,
};

/**
 * The server's 'clientError' listener. A request that did not arrive within HEADERS_TIMEOUT_MS
 * or REQUEST_TIMEOUT_MS gets the contract's 408 body (`reason: request_timeout`); anything else
 * Node's parser refused is answered as Node would (a bare 400, 413 or 431). The connection is
 * half-closed, not reset, so the sender gets to read the answer.
 */
export function clientErrorListener(onTimeout: () => void) {
  return (error: NodeJS.ErrnoException, socket: Socket): void => {
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent: boolean } })._httpMessage;
    if (!socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      onTimeout();
      socket.write(timeoutAnswer());
    } else {
      const status = PARSER_STATUS[error.code ?? ''] ?? 400;
      socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\n\r\n`);
    }
    lingerThenDestroy(socket);
  };
}

function timeoutAnswer(): string {
  const body = JSON.stringify(errorBody(new Refusal('request_timeout', 'the request did not arrive in time; send it again')));
  return (
    `HTTP/1.1 408 ${STATUS_CODES[408]}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    `X-Request-Id: ${randomUUID()}\r\n` +
    'Connection: close\r\n\r\n' +
    body
  );
}
