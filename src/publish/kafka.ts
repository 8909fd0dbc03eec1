import {
  CompressionTypes,
  Kafka,
  Partitioners,
  logLevel,
  type Admin,
  type KafkaConfig,
  type LogEntry,
  type Message,
  type Producer,
  type TopicMessages,
} from 'kafkajs';
import type { Logger } from '../observability/logger';
import { PublishError } from './errors';
import { classifyKafkaError, describeKafkaError, type KafkaFailure } from './kafka-errors';
import { PartialWriteError, type OutRecord, type Sink, type TopicState } from './sink';
import { kafkaTiming, type KafkaTiming } from './timing';

export interface KafkaSasl {
  mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512';
  username: string;
  password: string;
}

export interface KafkaSinkOptions {
  brokers: string[];
  clientId: string;
  /** kafkajs idempotent producer; needs a broker that answers InitProducerId. */
  idempotent: boolean;
  compression: 'none' | 'gzip';
  logger: Logger;
  /** The topics the gateway writes to: checked once connected and reported, never created. */
  topics?: string[];
  /** kafkajs' timeouts and retries, derived from PUBLISH_TIMEOUT_MS. Default: those of 5 s. */
  timing?: KafkaTiming;
  /** TLS to the brokers (the system's CAs, or NODE_EXTRA_CA_CERTS). */
  ssl?: boolean;
  sasl?: KafkaSasl;
  /** Called once for every Produce request the producer sends (batching metric). */
  onProduceRequest?: () => void;
  /** Called when what is known of a topic changes (metric). */
  onTopicState?: (topic: string, state: TopicState) => void;
  /**
   * Upper bound of the bytes handed to one sendBatch. Kafka refuses a record batch (all the
   * records of one partition in one request) over message.max.bytes (1 MiB by default), so a
   * larger write is sent as several consecutive requests. Default 1_000_000.
   */
  maxRequestBytes?: number;
}

const DEFAULT_PUBLISH_TIMEOUT_MS = 5000;
const RECONNECT_MIN_MS = 200;
const RECONNECT_MAX_MS = 5000;
/** start() waits this long at most for the first connection and topic check, then goes on in the background. */
const START_WAIT_MS = 1000;
const PING_CACHE_MS = 1000;
const PING_TIMEOUT_MS = 1000;
/** Between probes of a cluster that did not answer. */
const PROBE_PAUSE_MS = 50;
/** A topic found missing (or not authorized) is looked at again this often; until then its records fail at once. */
const TOPIC_RECHECK_MS = 5000;
/** Per-record overhead in a Kafka record batch (varints, attributes, header framing), rounded up. */
const RECORD_OVERHEAD_BYTES = 100;
/** The same log line is written at most once in this window (an outage repeats them). */
const LOG_REPEAT_MS = 30_000;

/** The kafkajs client configuration: brokers, TLS, SASL and the derived timeouts. */
export function kafkaClientConfig(
  options: Pick<KafkaSinkOptions, 'brokers' | 'clientId' | 'ssl' | 'sasl'>,
  timing: KafkaTiming,
): KafkaConfig {
  const config: KafkaConfig = {
    brokers: options.brokers,
    clientId: options.clientId,
    connectionTimeout: timing.connectionTimeoutMs,
    authenticationTimeout: Math.max(timing.requestTimeoutMs, timing.connectionTimeoutMs),
    requestTimeout: timing.requestTimeoutMs,
    enforceRequestTimeout: true,
    retry: timing.retry,
  };
  if (options.ssl) config.ssl = true;
  if (options.sasl) {
    const { mechanism, username, password } = options.sasl;
    config.sasl = { mechanism, username, password } as KafkaConfig['sasl'];
  }
  return config;
}

/**
 * Kafka sink on a kafkajs producer: acks from all in-sync replicas, the DefaultPartitioner
 * (murmur2 of the key, as the Java client), record key and headers from the OutRecord. It never
 * creates a topic (allowAutoTopicCreation off): both topics are checked once connected, and a
 * missing one is logged as an error, reported by topics() and its records fail at once
 * (topic_missing) until a re-check finds it.
 *
 * start() never fails for an unreachable cluster: it connects in the background with backoff,
 * ping() rejects meanwhile and write() refuses at once with `unavailable`. One write() is one
 * sendBatch (grouped by topic) per maxRequestBytes, bounded by the derived request timeout and
 * retry budget; the batcher applies each caller's own deadline on top. A record the broker
 * refuses as too large fails alone (PartialWriteError), and so do the records of a missing
 * topic; the rest is written.
 */
export class KafkaSink implements Sink {
  readonly name = 'kafka';
  private readonly kafka: Kafka;
  private readonly timing: KafkaTiming;
  private readonly maxRequestBytes: number;
  private producer?: Producer;
  /** Counts replacements: a connection loop serves one generation. */
  private generation = 0;
  private admin?: Admin;
  private adminConnected = false;
  private connected = false;
  private started = false;
  private closed = false;
  private closing?: Promise<void>;
  private lastError?: string;
  private loop?: Promise<void>;
  private wake?: () => void;
  private readonly retiring = new Set<Promise<void>>();
  private probe?: Promise<void>;
  private probeOp?: Promise<unknown>;
  private probeResult?: { at: number; error?: string };
  /** A request got no clear answer: nothing more is sent until the cluster answers a probe. */
  private suspect = false;
  /** An idempotent producer's sequence numbers may be out of step: the next write uses a new one. */
  private freshProducerNeeded = false;
  private readonly topicStates = new Map<string, { state: TopicState; cause?: string }>();
  private topicCheck?: Promise<void>;
  private recheckTimer?: NodeJS.Timeout;
  private readonly logged = new Map<string, number>();

  constructor(private readonly options: KafkaSinkOptions) {
    this.timing = options.timing ?? kafkaTiming(DEFAULT_PUBLISH_TIMEOUT_MS);
    this.maxRequestBytes = options.maxRequestBytes ?? 1_000_000;
    for (const topic of options.topics ?? []) this.topicStates.set(topic, { state: 'unknown' });
    const log = options.logger;
    this.kafka = new Kafka({
      ...kafkaClientConfig(options, this.timing),
      logLevel: log.isLevelEnabled('debug') ? logLevel.INFO : logLevel.WARN,
      logCreator: () => (entry) => this.kafkaLog(entry),
    });
  }

  async start(): Promise<void> {
    if (this.started || this.closed) return;
    this.started = true;
    this.replaceProducer();
    // Give a reachable cluster a moment, so that a fresh process has connected and checked
    // its topics before it serves; an unreachable one does not hold the start up.
    let timer: NodeJS.Timeout | undefined;
    const ready = (async () => {
      await this.loop;
      await this.topicCheck;
    })();
    await Promise.race([ready, new Promise<void>((resolve) => (timer = setTimeout(resolve, START_WAIT_MS)))]);
    clearTimeout(timer);
  }

  async ping(): Promise<void> {
    if (this.closed) throw new Error('kafka: closed');
    if (!this.started) throw new Error('kafka: not started');
    if (!this.connected) {
      this.wake?.(); // a readiness probe also cuts the reconnect backoff short
      throw new Error(`kafka: not connected${this.lastError ? ` (${this.lastError})` : ''}`);
    }
    const cached = this.probeResult;
    if (cached && Date.now() - cached.at < PING_CACHE_MS) {
      if (cached.error) throw new Error(cached.error);
      return;
    }
    this.probe ??= this.probeCluster(PING_TIMEOUT_MS)
      .then(
        () => void (this.probeResult = { at: Date.now() }),
        (error: Error) => {
          this.probeResult = { at: Date.now(), error: error.message };
          throw error;
        },
      )
      .finally(() => (this.probe = undefined));
    return this.probe;
  }

  /** What is known of each configured topic: `unknown` until checked. */
  topics(): Record<string, TopicState> {
    return Object.fromEntries([...this.topicStates].map(([topic, { state }]) => [topic, state]));
  }

  async write(records: OutRecord[]): Promise<void> {
    if (records.length === 0) return;
    if (this.closed) throw new PublishError('closed', 'kafka: sink is closed');
    // Records of a topic known to be missing fail at once; the others are sent.
    const outcome = new Map<number, PublishError | true>();
    const sendable: number[] = [];
    records.forEach((record, i) => {
      const refusal = this.topicRefusal(record.topic);
      if (refusal) outcome.set(i, refusal);
      else sendable.push(i);
    });
    let failure: PublishError | undefined;
    try {
      for (const chunk of this.chunk(sendable, records)) await this.send(chunk, records, outcome);
    } catch (error) {
      if (!(error instanceof PublishError)) throw error; // a bug: the callers get a 500
      failure = error;
    }
    const failures = new Map<number, PublishError>();
    for (const i of records.keys()) {
      const result = outcome.get(i);
      if (result instanceof PublishError) failures.set(i, result);
      else if (result === undefined) failures.set(i, failure!);
    }
    if (failures.size === 0) return;
    if (failures.size === records.length && failure && [...failures.values()].every((f) => f === failure)) throw failure;
    throw new PartialWriteError(failures);
  }

  /**
   * One sendBatch of records[indices]; `outcome` gets true for each acknowledged record, or
   * the PublishError of one that failed on its own. A request the broker refuses as too large
   * is split in halves and each half sent again, so that only a record that is too large on
   * its own fails; one naming a missing topic is sent again per topic, so that only that
   * topic's records fail. Any other failure is thrown: every record not in `outcome` failed.
   */
  private async send(indices: number[], records: OutRecord[], outcome: Map<number, PublishError | true>): Promise<void> {
    const producer = await this.producerForWrite();
    const batch = indices.map((i) => records[i]);
    const topics = [...new Set(batch.map((r) => r.topic))];
    try {
      await producer.sendBatch({
        topicMessages: byTopic(batch),
        acks: -1,
        timeout: this.timing.requestTimeoutMs,
        compression: this.options.compression === 'gzip' ? CompressionTypes.GZIP : CompressionTypes.None,
      });
      for (const i of indices) outcome.set(i, true);
      return;
    } catch (error) {
      const failure = classifyKafkaError(error, topics.length === 1 ? topics[0] : undefined);
      if (!(failure.error instanceof PublishError)) {
        this.options.logger.error({ err: failure.error, records: indices.length }, 'kafka write failed: a bug');
        throw failure.error;
      }
      this.logFailure(failure, indices.length, topics);
      const reason = failure.error.reason;
      // After a request that got no clear answer (a timeout, a closed connection, a leader
      // move past the retries) the next batch waits until the cluster answers a probe: no other
      // batch fails meanwhile, and none is stacked onto a broker that stopped answering (it
      // would land when the broker continues, after its senders got 503). An idempotent
      // producer is then replaced: kafkajs rolls its sequence numbers back though the broker
      // may have written the request, and a fresh producer id keeps the next batch from being
      // taken for a duplicate, or refused as out of order, for good (so also after a partition
      // refused as too large, whose request may have written the others). A missing topic is
      // found before anything is sent, and the split below sends exactly the same records
      // again, which the broker takes for what they are.
      if (producer === this.producer) {
        if (reason === 'unavailable') {
          this.suspect = true;
          if (this.options.idempotent) this.freshProducerNeeded = true;
        } else if (this.options.idempotent && reason === 'too_large') {
          this.replaceProducer();
        }
      }
      if (reason === 'topic_missing') {
        if (topics.length === 1) {
          this.markTopic(topics[0], failure.cause);
          for (const i of indices) outcome.set(i, this.topicRefusal(topics[0]) ?? failure.error);
          return;
        }
        for (const topic of topics) await this.send(indices.filter((i) => records[i].topic === topic), records, outcome);
        return;
      }
      if (reason !== 'too_large') throw failure.error;
      if (indices.length === 1) {
        outcome.set(indices[0], failure.error);
        return;
      }
      // Several records were refused together (a broker or topic whose message size limit is
      // below maxRequestBytes): no one record is known to be at fault. kafkajs fails a request
      // when any partition of it fails, though the broker may have written the other
      // partitions' records: those are sent again with their half (at least once).
      const half = Math.ceil(indices.length / 2);
      await this.send(indices.slice(0, half), records, outcome);
      await this.send(indices.slice(half), records, outcome);
    }
  }

  /** A write can be sent now: the cluster answers (after a request that did not) and a producer is connected. */
  async ready(): Promise<void> {
    await this.producerForWrite();
  }

  /**
   * The producer for the next request. One that is still connecting (after a failed write
   * replaced it, or a broker that stopped answering) is waited for, at most one send's budget:
   * the batch is held, never sent to a broker that does not answer, and goes as soon as the
   * broker does. While connections are refused outright the write fails at once.
   */
  private async producerForWrite(): Promise<Producer> {
    if (this.closed) throw new PublishError('closed', 'kafka: sink is closed');
    if (this.suspect) await this.untilClusterAnswers();
    if (this.freshProducerNeeded) {
      this.freshProducerNeeded = false;
      this.replaceProducer();
    }
    if (this.producer && this.connected) return this.producer;
    this.wake?.(); // try to connect now rather than after the backoff
    const refused = this.lastError?.startsWith('connection error E') ?? false;
    if (this.producer && !refused) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.loop, new Promise<void>((resolve) => (timer = setTimeout(resolve, this.timing.sendBudgetMs)))]);
      clearTimeout(timer);
      if (this.closed) throw new PublishError('closed', 'kafka: sink is closed');
      if (this.producer && this.connected) return this.producer;
    }
    throw this.notConnected();
  }

  /**
   * Probes the cluster until it answers, for at most one send's budget; the write fails
   * (nothing of it sent) if it does not.
   */
  private async untilClusterAnswers(): Promise<void> {
    const deadline = performance.now() + this.timing.sendBudgetMs;
    for (;;) {
      const left = deadline - performance.now();
      try {
        await this.probeCluster(Math.max(1, Math.min(this.timing.requestTimeoutMs, left)));
        this.suspect = false;
        return;
      } catch (error) {
        if (this.closed) throw new PublishError('closed', 'kafka: sink is closed');
        const reason = (error as Error).message;
        if (performance.now() + PROBE_PAUSE_MS >= deadline || reason.includes('connection error E')) {
          throw new PublishError('unavailable', `${reason} (since a request got no answer)`);
        }
        await new Promise((resolve) => setTimeout(resolve, PROBE_PAUSE_MS));
      }
    }
  }

  private notConnected(): PublishError {
    return new PublishError('unavailable', `kafka: not connected${this.lastError ? ` (${this.lastError})` : ''}`);
  }

  /** The failure for a record of a topic known to be missing or not authorized; undefined otherwise. */
  private topicRefusal(topic: string): PublishError | undefined {
    const known = this.topicStates.get(topic);
    if (known?.state !== 'missing' && known?.state !== 'unauthorized') return undefined;
    return new PublishError('topic_missing', `kafka: topic ${topic} is ${known.state} (${known.cause})`, topic);
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.closed = true;
    this.connected = false;
    clearTimeout(this.recheckTimer);
    this.wake?.();
    const disconnectAll = () =>
      Promise.allSettled([this.producer?.disconnect(), this.adminConnected ? this.admin?.disconnect() : undefined]);
    await disconnectAll();
    // A connection attempt, probe or topic check that was under way may have opened sockets since.
    await Promise.allSettled([this.loop, this.probeOp, this.topicCheck, ...this.retiring]);
    await disconnectAll();
    this.producer = undefined;
    this.admin = undefined;
  }

  /**
   * A new producer (at start, or after a failed write), connected in the background. Each
   * connection attempt uses a producer of its own: kafkajs takes a connection left half open
   * by a failed attempt (TCP up, ApiVersions never answered by a stalled broker) for a
   * connected one.
   */
  private replaceProducer(): void {
    this.retire(this.producer);
    this.connected = false;
    const generation = ++this.generation;
    this.producer = this.createProducer();
    const previous = this.loop ?? Promise.resolve();
    this.loop = previous.then(() => this.connectLoop(generation));
  }

  private retire(producer: Producer | undefined): void {
    if (!producer) return;
    const retired = producer
      .disconnect()
      .catch(() => undefined)
      .finally(() => this.retiring.delete(retired));
    this.retiring.add(retired);
  }

  private createProducer(): Producer {
    const producer = this.kafka.producer({
      createPartitioner: Partitioners.DefaultPartitioner, // explicit: also silences kafkajs' partitioner notice
      idempotent: this.options.idempotent,
      // KIP-98: idempotence needs one in-flight request per connection (kafkajs also
      // serialises produce per broker for it); without idempotence there is no limit.
      maxInFlightRequests: this.options.idempotent ? 1 : undefined,
      retry: this.timing.retry,
      // The gateway never creates a topic: a typo in TOPIC_TRIGGERS must not send
      // acknowledged events into a new topic nobody reads.
      allowAutoTopicCreation: false,
    });
    const onProduce = this.options.onProduceRequest;
    if (onProduce) {
      producer.on(producer.events.REQUEST, (event) => {
        if (event.payload.apiName === 'Produce') onProduce();
      });
    }
    return producer;
  }

  private async connectLoop(generation: number): Promise<void> {
    let delay = RECONNECT_MIN_MS;
    let failures = 0;
    while (!this.closed && this.generation === generation) {
      const producer = this.producer!;
      try {
        await producer.connect();
        if (this.closed || this.generation !== generation) {
          await producer.disconnect().catch(() => undefined);
          return;
        }
        this.connected = true;
        this.lastError = undefined;
        this.options.logger.info({ brokers: this.options.brokers, idempotent: this.options.idempotent }, 'kafka connected');
        if ([...this.topicStates.values()].some((t) => t.state === 'unknown')) this.checkTopics();
        return;
      } catch (error) {
        const reason = describeKafkaError(error);
        if (failures === 0 || reason !== this.lastError) {
          const fields = { reason, brokers: this.options.brokers };
          // Refused for good (a SASL login, an ACL): an operator must act.
          if (classifyKafkaError(error).retriable) this.options.logger.warn(fields, 'kafka not reachable, retrying in the background');
          else this.options.logger.error(fields, 'kafka refused the connection, retrying in the background');
        }
        failures++;
        this.lastError = reason;
        if (this.closed || this.generation !== generation) return;
        this.retire(producer);
        this.producer = this.createProducer();
        await this.sleep(delay);
        delay = Math.min(delay * 2, RECONNECT_MAX_MS);
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      const wake = () => done();
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = wake;
    }).finally(() => (this.wake = undefined));
  }

  private async connectedAdmin(): Promise<Admin> {
    if (this.admin && this.adminConnected) return this.admin;
    const admin = (this.admin ??= this.kafka.admin({ retry: { retries: 0 } }));
    await admin.connect();
    if (this.admin === admin) this.adminConnected = true;
    return admin;
  }

  /**
   * One cheap Metadata round trip through a separate admin client, bounded by `timeoutMs`;
   * rejects with a short reason. An admin that could not connect is dropped, so that the next
   * probe starts from nothing (kafkajs would take its half-open connection for a good one).
   */
  private async probeCluster(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const op = (async () => {
      const admin = await this.connectedAdmin();
      const cluster = await admin.describeCluster();
      if (!cluster || cluster.brokers.length === 0) throw new Error('no brokers in metadata');
    })();
    this.probeOp = op.catch(() => undefined);
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timeout')), timeoutMs);
    });
    try {
      await Promise.race([op, timeout]);
    } catch (error) {
      if (!this.adminConnected) this.dropAdmin();
      throw new Error(
        error instanceof Error && error.message === 'timeout'
          ? `kafka: no answer within ${timeoutMs} ms`
          : error instanceof TypeError // kafkajs' describeCluster when no broker answered at all
            ? 'kafka: unreachable'
            : `kafka: ${describeKafkaError(error)}`,
      );
    } finally {
      clearTimeout(timer);
    }
  }

  private dropAdmin(): void {
    const admin = this.admin;
    this.admin = undefined;
    this.adminConnected = false;
    if (admin) {
      const retired = admin
        .disconnect()
        .catch(() => undefined)
        .finally(() => this.retiring.delete(retired));
      this.retiring.add(retired);
    }
  }

  /**
   * Asks the cluster about each configured topic on its own (one missing topic must not hide
   * the other), through the admin client, which never asks the broker to create one. A topic
   * still missing is looked at again every TOPIC_RECHECK_MS.
   */
  private checkTopics(): void {
    if (this.topicCheck || this.closed) return;
    this.topicCheck = (async () => {
      for (const topic of this.topicStates.keys()) {
        try {
          const admin = await this.connectedAdmin();
          await admin.fetchTopicMetadata({ topics: [topic] });
          this.setTopicState(topic, 'present');
        } catch (error) {
          const failure = classifyKafkaError(error, topic);
          if (failure.error instanceof PublishError && failure.error.reason === 'topic_missing') this.markTopic(topic, failure.cause);
          // Anything else (the cluster did not answer) tells nothing about the topic.
        }
      }
    })().finally(() => {
      this.topicCheck = undefined;
      this.scheduleRecheck();
    });
  }

  private scheduleRecheck(): void {
    if (this.closed || this.recheckTimer) return;
    if ([...this.topicStates.values()].every((t) => t.state === 'present')) return;
    this.recheckTimer = setTimeout(() => {
      this.recheckTimer = undefined;
      if (this.connected) this.checkTopics();
      else this.scheduleRecheck();
    }, TOPIC_RECHECK_MS);
    this.recheckTimer.unref();
  }

  /** A topic the cluster says does not exist, or may not be written (the cause says which). */
  private markTopic(topic: string, cause: string): void {
    this.setTopicState(topic, cause === 'TOPIC_AUTHORIZATION_FAILED' ? 'unauthorized' : 'missing', cause);
    this.scheduleRecheck();
  }

  private setTopicState(topic: string, state: TopicState, cause?: string): void {
    const before = this.topicStates.get(topic);
    this.topicStates.set(topic, { state, cause });
    if (before?.state === state) return;
    this.options.onTopicState?.(topic, state);
    if (state === 'present') {
      this.options.logger.info({ topic }, 'kafka topic found');
    } else {
      this.options.logger.error(
        { topic, cause },
        'kafka topic missing or not writable: its events are refused with 503 until it exists (the gateway never creates topics)',
      );
    }
  }

  /** A failed request: a warning when it may pass by itself, an error when an operator must act. */
  private logFailure(failure: KafkaFailure, records: number, topics: string[]): void {
    const fields = { reason: (failure.error as PublishError).reason, cause: failure.cause, records, topics };
    if (failure.retriable) this.options.logger.warn(fields, 'kafka write failed');
    else if (this.firstInWindow(`write|${failure.cause}|${topics.join(',')}`)) this.options.logger.error(fields, 'kafka write failed');
  }

  private firstInWindow(key: string): boolean {
    const now = Date.now();
    const last = this.logged.get(key);
    if (last !== undefined && now - last < LOG_REPEAT_MS) return false;
    if (this.logged.size > 200) this.logged.clear();
    this.logged.set(key, now);
    return true;
  }

  /** Consecutive slices of at most maxRequestBytes (a single larger record is a slice of its own). */
  private chunk(indices: number[], records: OutRecord[]): number[][] {
    const chunks: number[][] = [];
    let current: number[] = [];
    let bytes = 0;
    for (const i of indices) {
      const size = approximateBytes(records[i]);
      if (current.length > 0 && bytes + size > this.maxRequestBytes) {
        chunks.push(current);
        current = [];
        bytes = 0;
      }
      current.push(i);
      bytes += size;
    }
    if (current.length > 0) chunks.push(current);
    return chunks;
  }

  /** kafkajs log entries onto pino at warn or quieter; identical lines are not repeated within 30 s. */
  private kafkaLog({ namespace, level, log }: LogEntry): void {
    const { message, broker, error, retryCount } = log;
    // Our retry budget is deliberately small; the sink replaces the producer after a failure instead.
    if (typeof message === 'string' && message.includes('Limiting retries for the idempotent producer')) return;
    if (!this.firstInWindow(`${namespace}|${message}|${broker ?? ''}|${error ?? ''}`)) return;
    const fields = { component: 'kafkajs', namespace, broker, error, retryCount };
    if (level === logLevel.ERROR || level === logLevel.WARN) this.options.logger.warn(fields, message);
    else this.options.logger.debug(fields, message);
  }
}

function approximateBytes(record: OutRecord): number {
  let bytes = RECORD_OVERHEAD_BYTES + Buffer.byteLength(record.value) + Buffer.byteLength(record.key);
  for (const name in record.headers) bytes += Buffer.byteLength(name) + Buffer.byteLength(record.headers[name]);
  return bytes;
}

/** Records grouped by topic, in their original order within each topic. */
function byTopic(records: OutRecord[]): TopicMessages[] {
  const topics = new Map<string, Message[]>();
  for (const record of records) {
    let messages = topics.get(record.topic);
    if (!messages) topics.set(record.topic, (messages = []));
    messages.push({ key: record.key, value: record.value, headers: { ...record.headers } });
  }
  return [...topics].map(([topic, messages]) => ({ topic, messages }));
}
