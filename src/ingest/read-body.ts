import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError } from '../http/errors';
import type { BodyBudget } from './body-budget';
import { RETRY_AFTER_SECONDS } from './publish-failure';

/** After a 413, the rest of the body is read and dropped for at most this long / this much. */
const DISCARD_MS = 5000;
const DISCARD_FACTOR = 16;

/**
 * Reads the body as raw bytes, refusing it with 413 as soon as it passes `limit`: up front
 * from Content-Length, or while streaming for a chunked body. Nothing past the limit is kept.
 * The bytes count against the process-wide `budget` until the response is done; with the
 * budget spent the request gets 503 (send it again) instead of more memory.
 */
export function readRawBody(req: IncomingMessage, res: ServerResponse, limit: number, budget: BodyBudget): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.reject(tooLarge(limit));
  let held = 0;
  res.once('close', () => budget.give(held));

  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
    };
    const refuse = (error: HttpError) => {
      cleanup();
      chunks.length = 0;
      discardRest(req, limit * DISCARD_FACTOR);
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) return refuse(tooLarge(limit));
      if (!budget.tryTake(chunk.length)) return refuse(overBudget());
      held += chunk.length;
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    };
    const onError = () => {
      cleanup();
      reject(new HttpError('BAD_REQUEST', 'the request body could not be read'));
    };
    const onAborted = onError;
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
}

/**
 * Drops what the sender is still sending so that it gets to read the 413 (closing at once
 * makes many clients fail with EPIPE before they see the answer); a sender that goes on
 * for too long or too much is cut off.
 */
function discardRest(req: IncomingMessage, maxBytes: number): void {
  let dropped = 0;
  const cutOff = () => req.socket.destroy();
  const timer = setTimeout(cutOff, DISCARD_MS);
  timer.unref();
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > maxBytes) cutOff();
  });
  req.once('close', () => clearTimeout(timer));
  req.resume();
}

function overBudget(): HttpError {
  return new HttpError('SERVICE_UNAVAILABLE', 'too many request bodies in memory; send it again', { reason: 'busy' }, {
    'Retry-After': RETRY_AFTER_SECONDS,
  });
}

function tooLarge(limit: number): HttpError {
  return new HttpError('PAYLOAD_TOO_LARGE', `the body exceeds ${limit} bytes`, { limit });
}
