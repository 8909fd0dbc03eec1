/**
 * Every publish-side timeout derived from the two settings an operator chooses:
 * PUBLISH_TIMEOUT_MS (how long a sender waits for its acknowledgement) and SHUTDOWN_GRACE_MS
 * (how long a drain may take). Kept in one place so that they cannot drift apart:
 *
 *   kafkajs' attempts (retries + 1) × request timeout + backoff  ≤  80% of the deadline
 *   the deadline  <  the batcher's write timeout (1.5 × the deadline)
 *   the deadline + the write timeout + 2 s to close  ≤  the grace
 *
 * so that kafkajs has stopped sending a batch before its senders are told 503 (a copy sent
 * after the answer would be a duplicate of the sender's retry), and a drain during a stall
 * ends, and exits 0, within the grace.
 */

export interface RetryPolicy {
  retries: number;
  initialRetryTime: number;
  maxRetryTime: number;
  factor: number;
  multiplier: number;
}

export interface KafkaTiming {
  /** kafkajs `requestTimeout`, also the broker's ack timeout of a Produce request. */
  requestTimeoutMs: number;
  connectionTimeoutMs: number;
  retry: RetryPolicy;
  /** The longest one send can take: every attempt times out and every backoff is the longest. */
  sendBudgetMs: number;
}

/**
 * One quick retry, for a leader move (kafkajs refreshes the metadata first). Each attempt
 * must have time to be answered on a busy machine, and each attempt at a stalled broker is a
 * copy that lands when it continues (deduplicated only by the idempotent producer).
 */
const RETRY: RetryPolicy = { retries: 1, initialRetryTime: 100, maxRetryTime: 400, factor: 0.2, multiplier: 2 };
/** Share of the deadline kafkajs may use; the rest covers lingering, queueing and the answer. */
const KAFKA_SHARE = 0.8;
/** Below this a healthy broker's acks=all answer on a busy machine would time out. */
export const MIN_REQUEST_TIMEOUT_MS = 200;
const MAX_CONNECTION_TIMEOUT_MS = 1000;
/** Disconnecting the producer, closing the stores, flushing the log. */
export const CLOSE_MARGIN_MS = 2000;

/** The longest total of kafkajs' waits between attempts (its retrier's jitter taken at its top). */
export function longestBackoffMs(retry: RetryPolicy): number {
  let total = 0;
  let wait = retry.initialRetryTime * (1 + retry.factor);
  for (let i = 0; i < retry.retries; i++) {
    total += Math.ceil(Math.min(wait, retry.maxRetryTime));
    wait = wait * (1 + retry.factor) * retry.multiplier;
  }
  return total;
}

export function kafkaTiming(publishTimeoutMs: number): KafkaTiming {
  const attempts = RETRY.retries + 1;
  const backoff = longestBackoffMs(RETRY);
  const requestTimeoutMs = Math.floor((publishTimeoutMs * KAFKA_SHARE - backoff) / attempts);
  return {
    requestTimeoutMs,
    connectionTimeoutMs: Math.max(1, Math.min(MAX_CONNECTION_TIMEOUT_MS, requestTimeoutMs)),
    retry: RETRY,
    sendBudgetMs: attempts * requestTimeoutMs + backoff,
  };
}

/** The smallest PUBLISH_TIMEOUT_MS that leaves kafkajs MIN_REQUEST_TIMEOUT_MS per attempt. */
export function minPublishTimeoutForKafkaMs(): number {
  return Math.ceil(((RETRY.retries + 1) * MIN_REQUEST_TIMEOUT_MS + longestBackoffMs(RETRY)) / KAFKA_SHARE);
}

/**
 * A sink write still unsettled by then counts as failed, so one write that hangs for good (an
 * fsync on a dead disk) cannot hold every later batch. Past the deadline, so that a Kafka
 * write, which ends by itself within sendBudgetMs, is never abandoned and another stacked onto
 * the same stalled connection.
 */
export function writeTimeoutMs(publishTimeoutMs: number): number {
  return Math.ceil(publishTimeoutMs * 1.5);
}

/** The longest drain: requests in flight end by their deadline, a batch started meanwhile by its write timeout. */
export function longestDrainMs(publishTimeoutMs: number): number {
  return publishTimeoutMs + writeTimeoutMs(publishTimeoutMs) + CLOSE_MARGIN_MS;
}
