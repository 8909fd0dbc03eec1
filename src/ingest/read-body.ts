import type { IncomingMessage } from 'node:http';
import { Refusal } from '../outcomes/refusal';
import type { BodyLease, Refusal as NoRoom } from './body-budget';
import { watchBody } from './body-watch';
import { guarded } from './guard';

/** The slowest body accepted: at least `limit` bytes in every `windowSeconds` until it ends. */
export interface MinRate {
  limit: number;
  windowSeconds: number;
}

export interface BodyRules {
  /** Largest body in bytes (413 past it). */
  limit: number;
  /** Where the bytes are held (503 or 429 when it has no room). */
  lease: BodyLease;
  /** 408 `body_too_slow` below it. */
  minRate: MinRate;
  /** 408 `request_timeout` when the body has not ended within this long (REQUEST_TIMEOUT_MS). */
  timeoutMs: number;
  /** Told how many bytes were read once reading stops, whether the body ended or was refused (the delivery log's `bytes`). */
  counted?: (bytes: number) => void;
}

/**
 * Reads the body as raw bytes, refusing it with 413 as soon as it passes `limit`: up front
 * from Content-Length, or while streaming for a chunked body. Nothing past the limit is kept.
 * The bytes are taken from `lease` (the fair share of the process-wide body budget): without
 * room the request gets 503, or 429 past its share (send it again), instead of more memory. A body that arrives
 * slower than `minRate`, or not done within `timeoutMs`, gets 408: a trickling sender cannot
 * hold its share, a connection or a shutdown for long (Node enforces its requestTimeout only
 * while the server is not closing). What a refused sender still sends is dropped by the
 * error handler (lingering close), never kept.
 */
export function readRawBody(req: IncomingMessage, rules: BodyRules): Promise<Buffer> {
  const { limit, lease, minRate } = rules;
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.reject(tooLarge(limit));
  if (arrivedWhole(req, declared)) return readArrived(req, rules);

  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let sizeAtLastCheck = 0;
    const windowMs = minRate.windowSeconds * 1000;
    const started = Date.now();
    const deadline = started + rules.timeoutMs;
    let nextRateCheck = started + windowMs;
    const unwatch = watchBody({
      check(now) {
        if (now >= deadline) {
          return refuse(new Refusal('request_timeout', 'the request did not arrive in time; send it again', { timeoutMs: rules.timeoutMs }));
        }
        if (now < nextRateCheck) return;
        nextRateCheck += windowMs;
        if (size - sizeAtLastCheck < minRate.limit) return refuse(tooSlow(minRate));
        sizeAtLastCheck = size;
      },
    });
    const cleanup = () => {
      unwatch();
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onError);
    };
    // The handlers are guarded: what they throw (a bug) fails this request, never the process.
    const refuse = (error: unknown) => {
      cleanup();
      rules.counted?.(size);
      chunks.length = 0;
      lease.release();
      reject(error);
    };
    const onData = guarded(refuse, (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) return refuse(tooLarge(limit));
      const refusal = lease.take(chunk.length);
      if (refusal) return refuse(noRoom(refusal));
      chunks.push(chunk);
    });
    const onEnd = guarded(refuse, () => {
      cleanup();
      rules.counted?.(size);
      resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    });
    const onError = () => refuse(new Refusal('body_unreadable', 'the request body could not be read'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onError);
  });
}

/**
 * A small body usually arrives in the packets that carried the headers: by the time the route
 * reads it, the parser has buffered all its Content-Length bytes (it never buffers more). It is
 * taken in one read, without the listeners, ticks and rate watch of a body still arriving.
 */
function arrivedWhole(req: IncomingMessage, declared: number): boolean {
  return declared > 0 && req.readableLength === declared && req.readableFlowing === null && !req.readableEnded && !req.destroyed;
}

function readArrived(req: IncomingMessage, { limit, lease, counted }: BodyRules): Promise<Buffer> {
  const size = req.readableLength;
  counted?.(size);
  if (size > limit) return Promise.reject(tooLarge(limit));
  const refusal = lease.take(size);
  if (refusal) {
    lease.release();
    return Promise.reject(noRoom(refusal));
  }
  return Promise.resolve(req.read() as Buffer);
}

/**
 * 503 `busy` when the process holds all the body memory it may; 429 `body_share_exceeded` when
 * this route, workspace or client address holds its share (its own traffic is the cause).
 */
export function noRoom(refusal: NoRoom): Refusal {
  if (refusal === 'share') {
    return new Refusal('body_share_exceeded', 'this route, workspace or client already has its share of request bodies in memory; send it again', {});
  }
  return new Refusal('busy', 'too many request bodies in memory; send it again', {});
}

function tooLarge(limit: number): Refusal {
  return new Refusal('body_too_large', `the body exceeds ${limit} bytes`, { limit });
}

function tooSlow(minRate: MinRate): Refusal {
  return new Refusal(
    'body_too_slow',
    `the body arrived slower than ${minRate.limit} bytes in ${minRate.windowSeconds} s; send it again`,
    { minBytes: minRate.limit, windowSeconds: minRate.windowSeconds },
  );
}
