import { PublishError } from './errors';

/** Broker answers that mean "this record (batch) will never fit": sending it again cannot help. */
const TOO_LARGE_TYPES = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE']);
/** Their Kafka protocol codes, for errors that carry only the code. */
const TOO_LARGE_CODES = new Set([10, 18]);
/** The topic does not exist (the gateway never creates one) or this client may not write to it. */
const TOPIC_TYPES = new Set(['UNKNOWN_TOPIC_OR_PARTITION', 'TOPIC_AUTHORIZATION_FAILED', 'INVALID_TOPIC_EXCEPTION']);
/** What kafkajs' own retrier counts as bugs rather than failures (kafkajs/src/retry). */
const PROGRAMMING_ERRORS = new Set(['TypeError', 'RangeError', 'ReferenceError', 'SyntaxError']);

/** The fields of a kafkajs error this module reads; every one is optional. */
interface ErrorLike {
  name?: unknown;
  type?: unknown;
  code?: unknown;
  retriable?: unknown;
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
  const protocol = chain.find((e) => typeof e.type === 'string' && /^[A-Z_]+$/.test(e.type));
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
 * kafkajs' own answer to "may this work if sent again?": its retrier wraps a retriable error
 * that ran out of attempts in KafkaJSNumberOfRetriesExceeded, and anything it would not retry
 * in KafkaJSNonRetriableError; below them, every KafkaJS error carries `retriable`.
 */
function isRetriable(chain: ErrorLike[]): boolean {
  if (chain.some((e) => e.name === 'KafkaJSNumberOfRetriesExceeded')) return true;
  const innermost = [...chain].reverse().find((e) => typeof e.retriable === 'boolean');
  return innermost ? innermost.retriable === true : true;
}

export interface KafkaFailure {
  /**
   * What the callers get: a PublishError for Kafka's answer (too large → 413; everything else
   * → 503 "send it again"), or, for a bug, the programming error itself (→ 500).
   */
  error: PublishError | Error;
  /** Kafka's answer may change by itself (kafkajs' `retriable`): logged as a warning; else as an error. */
  retriable: boolean;
  /** Content-free, for the log: `UNKNOWN_TOPIC_OR_PARTITION`, `connection error ECONNREFUSED`, `TypeError`… */
  cause: string;
}

/**
 * Sorts a kafkajs failure: a broker refusing the size of a record (anywhere in the chain) is
 * `too_large`; a topic that does not exist or may not be written is `topic_missing` (503, but
 * an operator must act); a TypeError and its kin, thrown by our code or by kafkajs' (which
 * does not retry them either), is a bug; everything else (connection refused or closed,
 * request timeout, leader changes past the retry budget, other broker refusals) is
 * `unavailable`, "send it again".
 */
export function classifyKafkaError(error: unknown, topic?: string): KafkaFailure {
  if (error instanceof PublishError) {
    return { error, retriable: error.reason !== 'topic_missing' && error.reason !== 'too_large', cause: error.reason };
  }
  const chain = errorChain(error);
  const cause = reasonOf(chain);
  if (chain.some(isTooLarge)) {
    return {
      error: new PublishError('too_large', `kafka: record refused by the broker as too large (${cause})`),
      retriable: false,
      cause,
    };
  }
  const topicError = chain.find((e) => typeof e.type === 'string' && TOPIC_TYPES.has(e.type));
  if (topicError) {
    const type = String(topicError.type);
    const where = topic ? `topic ${topic}` : 'a topic of the batch';
    return { error: new PublishError('topic_missing', `kafka: ${where}: ${type}`, topic), retriable: false, cause: type };
  }
  const bug = [...chain].reverse().find((e) => typeof e.name === 'string' && PROGRAMMING_ERRORS.has(e.name));
  if (bug && bug instanceof Error) return { error: bug, retriable: false, cause };
  // A produce request that timed out was sent: the broker may have written it all the same.
  const mayHold = chain.some((e) => e.name === 'KafkaJSRequestTimeoutError');
  return { error: new PublishError('unavailable', `kafka: ${cause}`, undefined, mayHold), retriable: isRetriable(chain), cause };
}
