import { PublishError } from './errors';

/** Broker answers that mean "this record (batch) will never fit": sending it again cannot help. */
const TOO_LARGE_TYPES = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE']);
/** Their Kafka protocol codes, for errors that carry only the code. */
const TOO_LARGE_CODES = new Set([10, 18]);

/** The fields of a kafkajs error this module reads; every one is optional. */
interface ErrorLike {
  name?: unknown;
  type?: unknown;
  code?: unknown;
  cause?: unknown;
  errors?: unknown;
}

/**
 * Every error in a kafkajs error chain, outermost first. kafkajs wraps: the retrier turns
 * the last error into `KafkaJSNumberOfRetriesExceeded` or `KafkaJSNonRetriableError` with
 * the original as `cause`; `KafkaJSAggregateError` lists several in `errors`. Cycles and
 * absurd depths are cut off.
 */
export function errorChain(error: unknown): ErrorLike[] {
  const chain: ErrorLike[] = [];
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  while (queue.length > 0 && chain.length < 32) {
    const next = queue.shift();
    if (next === null || typeof next !== 'object' || seen.has(next)) continue;
    seen.add(next);
    const e = next as ErrorLike;
    chain.push(e);
    if (e.cause !== undefined) queue.push(e.cause);
    if (Array.isArray(e.errors)) queue.push(...e.errors);
  }
  return chain;
}

function isTooLarge(e: ErrorLike): boolean {
  if (typeof e.type === 'string' && TOO_LARGE_TYPES.has(e.type)) return true;
  return e.name === 'KafkaJSProtocolError' && typeof e.code === 'number' && TOO_LARGE_CODES.has(e.code);
}

/**
 * A short reason built only from error names, protocol error types and socket error codes,
 * never from free text, so that no record content (or anything else a broker echoes) can
 * reach a log line or a response.
 */
function reasonOf(chain: ErrorLike[]): string {
  const protocol = chain.find((e) => e.name === 'KafkaJSProtocolError' && typeof e.type === 'string');
  if (protocol) return String(protocol.type);
  const socket = chain.find((e) => typeof e.code === 'string' && /^E[A-Z]+$/.test(e.code));
  if (socket) return `connection error ${String(socket.code)}`;
  if (chain.some((e) => e.name === 'KafkaJSRequestTimeoutError')) return 'request timed out';
  if (chain.some((e) => e.name === 'KafkaJSConnectionError' || e.name === 'KafkaJSConnectionClosedError')) {
    return 'connection error';
  }
  if (chain.some((e) => e.name === 'KafkaJSBrokerNotFound')) return 'broker not found';
  // The innermost named error says most about what happened.
  const named = [...chain].reverse().find((e) => typeof e.name === 'string' && /^[A-Za-z]+$/.test(e.name));
  return named ? String(named.name) : 'unknown error';
}

/** A short, content-free description of any kafkajs error, e.g. `connection error ECONNREFUSED`. */
export function describeKafkaError(error: unknown): string {
  return reasonOf(errorChain(error));
}

/**
 * Maps a kafkajs failure onto the publisher's reasons: a broker refusing the size of a record
 * (MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE, anywhere in the chain) is `too_large`; anything
 * else (connection refused or closed, request timeout, leader changes past the retry budget,
 * unknown errors) is `unavailable`, which means "send it again".
 */
export function classifyKafkaError(error: unknown): PublishError {
  if (error instanceof PublishError) return error;
  const chain = errorChain(error);
  if (chain.some(isTooLarge)) {
    return new PublishError('too_large', `kafka: record refused by the broker as too large (${reasonOf(chain)})`);
  }
  return new PublishError('unavailable', `kafka: ${reasonOf(chain)}`);
}
