/**
 * The publish-side timeouts derived from PUBLISH_TIMEOUT_MS (src/publish/timing.ts): kafkajs
 * stops sending a batch before its senders are told 503, and a drain during a stall ends
 * within the grace. kafkajs' own retrier is run to check the backoff bound.
 */
import {
  kafkaTiming,
  longestBackoffMs,
  longestDrainMs,
  minPublishTimeoutForKafkaMs,
  writeTimeoutMs,
} from '../../src/publish/timing';
import { loadConfig } from '../../src/config/load';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const createRetry = require('kafkajs/src/retry') as (options: object) => (fn: () => Promise<unknown>) => Promise<unknown>;

describe.each([650, 1500, 2500, 5000, 30_000, 120_000])('PUBLISH_TIMEOUT_MS=%i', (deadline) => {
  const timing = kafkaTiming(deadline);

  it('retries × request timeout, and every attempt with its backoff, end before the deadline', () => {
    const { retries } = timing.retry;
    expect(retries * timing.requestTimeoutMs).toBeLessThan(deadline);
    expect((retries + 1) * timing.requestTimeoutMs + longestBackoffMs(timing.retry)).toBe(timing.sendBudgetMs);
    expect(timing.sendBudgetMs).toBeLessThanOrEqual(deadline * 0.8);
    expect(timing.requestTimeoutMs).toBeGreaterThanOrEqual(200);
    expect(timing.connectionTimeoutMs).toBeLessThanOrEqual(Math.min(1000, timing.requestTimeoutMs));
    expect(retries).toBeGreaterThanOrEqual(1); // a leader move gets its retry
  });

  it('deadline < the batcher\'s write timeout, and deadline + write timeout + closing ≤ the smallest grace accepted', () => {
    expect(writeTimeoutMs(deadline)).toBeGreaterThan(deadline);
    expect(writeTimeoutMs(deadline)).toBeGreaterThan(timing.sendBudgetMs);
    const grace = longestDrainMs(deadline);
    expect(grace).toBeGreaterThanOrEqual(deadline + writeTimeoutMs(deadline) + 2000);
    const loaded = loadConfig({
      KAFKA_BROKERS: 'k:9092',
      PUBLISH_TIMEOUT_MS: String(deadline),
      SHUTDOWN_GRACE_MS: String(grace),
      REQUEST_TIMEOUT_MS: String(grace - 500),
      HEADERS_TIMEOUT_MS: String(grace - 1000),
    });
    expect(loaded.ok).toBe(true);
  });
});

test('the smallest deadline for Kafka is the one that leaves 200 ms per attempt', () => {
  expect(minPublishTimeoutForKafkaMs()).toBe(650);
  expect(kafkaTiming(650).requestTimeoutMs).toBe(200);
  expect(kafkaTiming(649).requestTimeoutMs).toBeLessThan(200);
});

test('the default deadline gives kafkajs 2 attempts of 1.94 s (it was 3 × 3 s against 5 s)', () => {
  expect(kafkaTiming(5000)).toMatchObject({ requestTimeoutMs: 1940, connectionTimeoutMs: 1000, retry: { retries: 1 } });
  expect(kafkaTiming(5000).sendBudgetMs).toBe(4000);
});

test("kafkajs' retrier, with its jitter at the top, waits no longer than longestBackoffMs in all", async () => {
  jest.useFakeTimers();
  const random = jest.spyOn(Math, 'random').mockReturnValue(0.999999);
  try {
    const { retry } = kafkaTiming(5000);
    let attempts = 0;
    const started = Date.now();
    const failing = createRetry(retry)(async () => {
      attempts++;
      throw Object.assign(new Error('not leader'), { retriable: true });
    });
    const outcome = failing.catch((error: Error) => error);
    await jest.runAllTimersAsync();
    const error = await outcome;
    expect(error).toMatchObject({ name: 'KafkaJSNumberOfRetriesExceeded' });
    expect(attempts).toBe(retry.retries + 1);
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThan(0);
    expect(waited).toBeLessThanOrEqual(longestBackoffMs(retry));
  } finally {
    random.mockRestore();
    jest.useRealTimers();
  }
});
