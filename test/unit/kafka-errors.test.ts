/**
 * The Kafka error classifier on kafkajs' own error classes, wrapped the way kafkajs wraps
 * them. librdkafka's mock broker accepts records of any size, so the too-large path is
 * checked here rather than end to end (missing topics and leader moves are also checked end
 * to end, through test/helpers/kafka-fault-proxy.ts).
 */
import {
  KafkaJSAggregateError,
  KafkaJSBrokerNotFound,
  KafkaJSConnectionError,
  KafkaJSError,
  KafkaJSNonRetriableError,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSProtocolError,
  KafkaJSRequestTimeoutError,
} from 'kafkajs';
import { PublishError } from '../../src/publish/errors';
import { classifyKafkaError, describeKafkaError, errorChain } from '../../src/publish/kafka-errors';

// kafkajs builds protocol errors from the broker's error code with this (internal) function.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { createErrorFromCode } = require('kafkajs/src/protocol/error') as {
  createErrorFromCode(code: number): KafkaJSProtocolError;
};

/** Exported by kafkajs at run time, missing from its type declarations. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { KafkaJSConnectionClosedError } = require('kafkajs') as {
  KafkaJSConnectionClosedError: new (e: string, m: { host: string; port: number }) => KafkaJSConnectionError;
};
const BrokerNotFound = KafkaJSBrokerNotFound as unknown as new (e: string) => KafkaJSBrokerNotFound;

/** kafkajs' retrier: `new KafkaJSNonRetriableError(e, { cause: e.cause || e })` (typed with one argument). */
const NonRetriable = KafkaJSNonRetriableError as unknown as new (e: Error, m: { cause: Error }) => KafkaJSNonRetriableError;
const retriesExceeded = (e: Error) => new KafkaJSNumberOfRetriesExceeded(e, { retryCount: 2, retryTime: 400 });

const MESSAGE_TOO_LARGE = 10;
const RECORD_LIST_TOO_LARGE = 18;
const NOT_LEADER_FOR_PARTITION = 6;
const UNKNOWN_TOPIC_OR_PARTITION = 3;
const TOPIC_AUTHORIZATION_FAILED = 29;
const CLUSTER_AUTHORIZATION_FAILED = 31;

/** The PublishError a kafkajs failure becomes (the test fails if it is anything else). */
function publishErrorOf(error: unknown, topic?: string): PublishError {
  const failure = classifyKafkaError(error, topic).error;
  expect(failure).toBeInstanceOf(PublishError);
  return failure as PublishError;
}

describe('classifyKafkaError', () => {
  it('says the broker may hold the records after a produce request timed out, not after a refused connection', () => {
    const timedOut = new KafkaJSRequestTimeoutError('Request Produce(key: 0, version: 7) timed out', {
      broker: '127.0.0.1:9',
      clientId: 'c',
      correlationId: 1,
      createdAt: 0,
      sentAt: 0,
      pendingDuration: 0,
    });
    expect(publishErrorOf(retriesExceeded(timedOut)).sinkMayHold).toBe(true);
    const refused = new KafkaJSConnectionError('Connection error: connect ECONNREFUSED 127.0.0.1:9');
    expect(publishErrorOf(refused).sinkMayHold).toBe(false);
  });


  test.each([
    ['MESSAGE_TOO_LARGE as thrown by the produce response', () => createErrorFromCode(MESSAGE_TOO_LARGE)],
    ['RECORD_LIST_TOO_LARGE', () => createErrorFromCode(RECORD_LIST_TOO_LARGE)],
    [
      'MESSAGE_TOO_LARGE inside KafkaJSNonRetriableError',
      () => {
        const e = createErrorFromCode(MESSAGE_TOO_LARGE);
        return new NonRetriable(e, { cause: e });
      },
    ],
    [
      'MESSAGE_TOO_LARGE two levels down',
      () => retriesExceeded(new NonRetriable(createErrorFromCode(MESSAGE_TOO_LARGE), { cause: createErrorFromCode(MESSAGE_TOO_LARGE) })),
    ],
    [
      'MESSAGE_TOO_LARGE among the errors of a KafkaJSAggregateError',
      () => new KafkaJSAggregateError('several', [new KafkaJSConnectionError('x'), createErrorFromCode(MESSAGE_TOO_LARGE)]),
    ],
    [
      'a protocol error known only by its code',
      () => Object.assign(new KafkaJSProtocolError('broker said no'), { code: MESSAGE_TOO_LARGE, type: undefined }),
    ],
  ])('%s → too_large', (_, make) => {
    const failure = publishErrorOf(make());
    expect(failure.reason).toBe('too_large');
    expect(failure.message).toMatch(/^kafka: /);
  });

  test.each([
    [
      'connection refused, retries exhausted',
      () =>
        retriesExceeded(
          new KafkaJSConnectionError('Connection error: connect ECONNREFUSED 127.0.0.1:9', {
            broker: '127.0.0.1:9',
            code: 'ECONNREFUSED',
          }),
        ),
      /ECONNREFUSED/,
    ],
    [
      'a dead connection surfacing as KafkaJSNonRetriableError',
      () => {
        const e = new KafkaJSConnectionClosedError('Closed connection', { host: '127.0.0.1', port: 9 });
        return new NonRetriable(e, { cause: e });
      },
      /connection error/,
    ],
    [
      'request timeout, retries exhausted',
      () =>
        retriesExceeded(
          new KafkaJSRequestTimeoutError('Request Produce(key: 0, version: 7) timed out', {
            broker: '127.0.0.1:9',
            clientId: 'c',
            correlationId: 1,
            createdAt: 0,
            sentAt: 0,
            pendingDuration: 0,
          }),
        ),
      /timed out/,
    ],
    ['leader moved, retries exhausted', () => retriesExceeded(createErrorFromCode(NOT_LEADER_FOR_PARTITION)), /NOT_LEADER_FOR_PARTITION/],
    ['broker not found', () => new BrokerNotFound('Broker 0 not found in the cached metadata'), /broker not found/],
    ['the producer is disconnected', () => new KafkaJSError('The producer is disconnected'), /KafkaJSError/],
    ['a plain Error', () => new Error('boom'), /Error/],
    ['not an error at all', () => 'weird', /unknown error/],
  ])('%s → unavailable, retriable', (_, make, reason) => {
    const { retriable } = classifyKafkaError(make());
    const failure = publishErrorOf(make());
    expect(failure.reason).toBe('unavailable');
    expect(failure.message).toMatch(/^kafka: /);
    expect(failure.message).toMatch(reason);
    expect(retriable).toBe(true);
  });

  test('a refusal kafkajs does not retry (its own retriable flag) is unavailable but not retriable: logged as an error', () => {
    const refused = createErrorFromCode(CLUSTER_AUTHORIZATION_FAILED);
    expect(refused.retriable).toBe(false);
    const failure = classifyKafkaError(new NonRetriable(refused, { cause: refused }));
    expect(failure).toMatchObject({ retriable: false, cause: 'CLUSTER_AUTHORIZATION_FAILED' });
    expect(failure.error).toMatchObject({ name: 'PublishError', reason: 'unavailable' });
  });

  test.each([
    ['UNKNOWN_TOPIC_OR_PARTITION past the retries (the Metadata answer for a topic that does not exist)', UNKNOWN_TOPIC_OR_PARTITION],
    ['TOPIC_AUTHORIZATION_FAILED', TOPIC_AUTHORIZATION_FAILED],
  ])('%s → topic_missing, naming the topic and the cause, not retriable', (_, code) => {
    const error = retriesExceeded(createErrorFromCode(code));
    const failure = classifyKafkaError(error, 'workflow.triggerz');
    expect(failure.retriable).toBe(false);
    expect(failure.cause).toBe(createErrorFromCode(code).type);
    expect(failure.error).toBeInstanceOf(PublishError);
    expect(failure.error).toMatchObject({ reason: 'topic_missing', topic: 'workflow.triggerz' });
    expect(failure.error.message).toContain('workflow.triggerz');
    expect(failure.error.message).toContain(createErrorFromCode(code).type);
  });

  test.each([
    ['a TypeError thrown by the sink itself', () => new TypeError("Cannot read properties of undefined (reading 'topic')")],
    [
      'a TypeError inside kafkajs, which its retrier wraps as non-retriable',
      () => {
        const e = new RangeError('Invalid array length');
        return new NonRetriable(e as never, { cause: e });
      },
    ],
  ])('%s is a bug: the programming error itself, never a PublishError (→ 500, not "retry later")', (_, make) => {
    const error = make();
    const failure = classifyKafkaError(error);
    expect(failure.error).not.toBeInstanceOf(PublishError);
    expect(['TypeError', 'RangeError']).toContain(failure.error.name);
    expect(failure.retriable).toBe(false);
  });

  test('a PublishError passes through unchanged', () => {
    const original = new PublishError('timeout', 'late');
    expect(classifyKafkaError(original).error).toBe(original);
  });

  test('the message never carries error text, so never record content a broker or kafkajs echoes', () => {
    const secret = '{"data":{"card":"4111 1111 1111 1111"}}';
    const failures = [
      classifyKafkaError(new KafkaJSNonRetriableError(`Invalid message ${secret}`)),
      classifyKafkaError(retriesExceeded(new KafkaJSError(secret))),
      classifyKafkaError(Object.assign(new KafkaJSProtocolError(secret), { code: MESSAGE_TOO_LARGE, type: 'MESSAGE_TOO_LARGE' })),
      classifyKafkaError(new Error(secret)),
      classifyKafkaError(Object.assign(new KafkaJSProtocolError(secret), { code: 3, type: 'UNKNOWN_TOPIC_OR_PARTITION' })),
    ];
    for (const failure of failures) {
      expect(failure.error.message).not.toContain('4111');
      expect(failure.cause).not.toContain('4111');
    }
  });

  test('cycles in cause chains end', () => {
    const a = new KafkaJSError('a') as KafkaJSError & { cause?: unknown };
    const b = new KafkaJSError('b', { cause: a } as never);
    Object.defineProperty(a, 'cause', { value: b });
    expect(errorChain(a)).toHaveLength(2);
    expect(publishErrorOf(a).reason).toBe('unavailable');
    expect(describeKafkaError(a)).toBe('KafkaJSError');
  });
});
