import type { IncomingMessage } from 'node:http';
import { HttpError } from '../http/errors';

/**
 * Reads the body as raw bytes, refusing it with 413 as soon as it passes `limit`: up front
 * from Content-Length, or while streaming for a chunked body. Nothing past the limit is kept.
 */
export function readRawBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.reject(tooLarge(limit));

  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        chunks.length = 0;
        req.pause();
        reject(tooLarge(limit));
        return;
      }
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

function tooLarge(limit: number): HttpError {
  return new HttpError('PAYLOAD_TOO_LARGE', `the body exceeds ${limit} bytes`, { limit }, { Connection: 'close' });
}
