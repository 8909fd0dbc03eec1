import {
  CompressionTypes,
  Kafka,
  Partitioners,
  logLevel,
  type Admin,
  type LogEntry,
  type Message,
  type Producer,
  type TopicMessages,
} from 'kafkajs';
import type { Logger } from '../observability/logger';
import { PublishError } from './errors';
import { classifyKafkaError, describeKafkaError } from './kafka-errors';
import { PartialWriteError, type OutRecord, type Sink } from './sink';

export interface KafkaSinkOptions {
  brokers: string[];
  clientId: string;
  /** kafkajs idempotent producer; needs a broker that answers InitProducerId. */
  idempotent: boolean;
  compression: 'none' | 'gzip';
  logger: Logger;
  /** Called once for every Produce request the producer sends (batching metric). */
  onProduceRequest?: () => void;
  /** Longest wait for one Kafka request, Produce included (also the broker's ack timeout). Default 3000. */
  requestTimeoutMs?: number;
  /**
   * Upper bound of the bytes handed to one sendBatch. Kafka refuses a record batch (all the
   * records of one partition in one request) over message.max.bytes (1 MiB by default), so a
   * larger write is sent as several consecutive requests. Default 1_000_000.
   */
  maxRequestBytes?: number;
}

const CONNECTION_TIMEOUT_MS = 1000;
/** kafkajs' own retries per call: a few quick ones for leader moves, well under the publish deadline. */
const RETRY = { retries: 2, initialRetryTime: 100, maxRetryTime: 500, factor: 0.2, multiplier: 2 };
const RECONNECT_MIN_MS = 200;
const RECONNECT_MAX_MS = 5000;
/** start() waits this long at most for the first connection attempt, then goes on connecting in the background. */
const START_WAIT_MS = 1000;
const PING_CACHE_MS = 1000;
const PING_TIMEOUT_MS = 1000;
/** Per-record overhead in a Kafka record batch (varints, attributes, header framing), rounded up. */
const RECORD_OVERHEAD_BYTES = 100;
/** The same kafkajs log line is written at most once in this window (an outage repeats them). */
const LOG_REPEAT_MS = 30_000;

/**
 * Kafka sink on a kafkajs producer: acks from all in-sync replicas, the DefaultPartitioner
 * (murmur2 of the key, as the Java client), record key and headers from the OutRecord.
 *
 * start() never fails for an unreachable cluster: it connects in the background with backoff,
 * ping() reports not-ready meanwhile and write() refuses at once with `unavailable`. One
 * write() is one sendBatch (grouped by topic) per maxRequestBytes, bounded by kafkajs' request
 * timeout and a small retry budget; the batcher applies each caller's own deadline on top. A
 * record the broker refuses as too large fails alone (PartialWriteError); the rest is written.
 */
export class KafkaSink implements Sink {
  readonly name = 'kafka';
  private readonly kafka: Kafka;
  private readonly requestTimeoutMs: number;
  private readonly maxRequestBytes: number;
  private producer?: Producer;
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
  private readonly logged = new Map<string, number>();

  constructor(private readonly options: KafkaSinkOptions) {
    this.requestTimeoutMs = options.requestTimeoutMs ?? 3000;
    this.maxRequestBytes = options.maxRequestBytes ?? 1_000_000;
    const log = options.logger;
    this.kafka = new Kafka({
      brokers: options.brokers,
      clientId: options.clientId,
      connectionTimeout: CONNECTION_TIMEOUT_MS,
      requestTimeout: this.requestTimeoutMs,
      enforceRequestTimeout: true,
      retry: RETRY,
      logLevel: log.isLevelEnabled('debug') ? logLevel.INFO : logLevel.WARN,
      logCreator: () => (entry) => this.kafkaLog(entry),
    });
  }

  async start(): Promise<void> {
    if (this.started || this.closed) return;
    this.started = true;
    this.replaceProducer();
    // Give a reachable cluster a moment so that a fresh process is ready at once; an
    // unreachable one does not hold the start up.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.loop, new Promise<void>((resolve) => (timer = setTimeout(resolve, START_WAIT_MS)))]);
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
    this.probe ??= this.runProbe().finally(() => (this.probe = undefined));
    return this.probe;
  }

  async write(records: OutRecord[]): Promise<void> {
    if (records.length === 0) return;
    if (this.closed) throw new PublishError('closed', 'kafka: sink is closed');
    if (!this.producer || !this.connected) {
      this.wake?.(); // try to connect now rather than after the backoff
      throw this.notConnected();
    }
    const attempt: WriteAttempt = { failures: new Map(), replaced: false, settled: 0 };
    let start = 0;
    try {
      for (const chunk of this.chunk(records)) {
        await this.send(chunk, start, attempt);
        start += chunk.length;
      }
    } catch (error) {
      if (attempt.settled === 0) throw error;
      // The records before `settled` were written (or refused alone): only the rest failed.
      const failure = error instanceof PublishError ? error : classifyKafkaError(error);
      for (let i = attempt.settled; i < records.length; i++) attempt.failures.set(i, failure);
    }
    if (attempt.failures.size > 0) throw new PartialWriteError(attempt.failures);
  }

  /**
   * One sendBatch of `records` (the write's records from index `start`). A request the broker
   * refuses as too large is split in halves and each half sent again, so that only a record
   * that is too large on its own fails (noted in attempt.failures) and the rest is written.
   */
  private async send(records: OutRecord[], start: number, attempt: WriteAttempt): Promise<void> {
    const producer = attempt.replaced ? await this.replacementProducer() : this.producer!;
    try {
      await producer.sendBatch({
        topicMessages: byTopic(records),
        acks: -1,
        timeout: this.requestTimeoutMs,
        compression: this.options.compression === 'gzip' ? CompressionTypes.GZIP : CompressionTypes.None,
      });
      attempt.settled = start + records.length;
    } catch (error) {
      const failure = classifyKafkaError(error);
      this.options.logger.warn({ reason: failure.message, records: records.length }, 'kafka write failed');
      // kafkajs rolls its idempotence sequence numbers back on a failed request, though the
      // broker may have written it (a timeout) or part of it: a fresh producer id keeps the
      // next batch from being taken for a duplicate, or refused as out of order, for good.
      if (this.options.idempotent && producer === this.producer) {
        this.replaceProducer();
        attempt.replaced = true;
      }
      if (failure.reason !== 'too_large') throw failure;
      if (records.length === 1) {
        attempt.failures.set(start, failure);
        attempt.settled = start + 1;
        return;
      }
      // Several records were refused together (a broker or topic whose message size limit is
      // below maxRequestBytes): no one record is known to be at fault. kafkajs fails a request
      // when any partition of it fails, though the broker may have written the other
      // partitions' records: those are sent again with their half (at least once).
      const half = Math.ceil(records.length / 2);
      await this.send(records.slice(0, half), start, attempt);
      await this.send(records.slice(half), start + half, attempt);
    }
  }

  /** The producer that replaced a failed idempotent one, once connected (at most the request timeout). */
  private async replacementProducer(): Promise<Producer> {
    if (!this.connected && !this.closed) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.loop, new Promise<void>((resolve) => (timer = setTimeout(resolve, this.requestTimeoutMs)))]);
      clearTimeout(timer);
    }
    if (this.closed) throw new PublishError('closed', 'kafka: sink is closed');
    if (!this.producer || !this.connected) throw this.notConnected();
    return this.producer;
  }

  private notConnected(): PublishError {
    return new PublishError('unavailable', `kafka: not connected${this.lastError ? ` (${this.lastError})` : ''}`);
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.closed = true;
    this.connected = false;
    this.wake?.();
    const disconnectAll = () =>
      Promise.allSettled([this.producer?.disconnect(), this.adminConnected ? this.admin?.disconnect() : undefined]);
    await disconnectAll();
    // A connection attempt or probe that was under way may have opened sockets since.
    await Promise.allSettled([this.loop, this.probeOp, ...this.retiring]);
    await disconnectAll();
    this.producer = undefined;
    this.admin = undefined;
  }

  /** A new producer (after start, or after a failed idempotent write), connected in the background. */
  private replaceProducer(): void {
    const old = this.producer;
    if (old) {
      const retired = old
        .disconnect()
        .catch(() => undefined)
        .finally(() => this.retiring.delete(retired));
      this.retiring.add(retired);
    }
    this.connected = false;
    const producer = this.kafka.producer({
      createPartitioner: Partitioners.DefaultPartitioner, // explicit: also silences kafkajs' partitioner notice
      idempotent: this.options.idempotent,
      // KIP-98: idempotence needs one in-flight request per connection (kafkajs also
      // serialises produce per broker for it); without idempotence there is no limit.
      maxInFlightRequests: this.options.idempotent ? 1 : undefined,
      retry: RETRY,
      allowAutoTopicCreation: true,
    });
    const onProduce = this.options.onProduceRequest;
    if (onProduce) {
      producer.on(producer.events.REQUEST, (event) => {
        if (event.payload.apiName === 'Produce') onProduce();
      });
    }
    this.producer = producer;
    const previous = this.loop ?? Promise.resolve();
    this.loop = previous.then(() => this.connectLoop(producer));
  }

  private async connectLoop(producer: Producer): Promise<void> {
    let delay = RECONNECT_MIN_MS;
    let failures = 0;
    while (!this.closed && this.producer === producer) {
      try {
        await producer.connect();
        if (this.closed || this.producer !== producer) {
          await producer.disconnect().catch(() => undefined);
          return;
        }
        this.connected = true;
        this.lastError = undefined;
        this.options.logger.info({ brokers: this.options.brokers, idempotent: this.options.idempotent }, 'kafka connected');
        return;
      } catch (error) {
        const reason = describeKafkaError(error);
        if (failures === 0 || reason !== this.lastError) {
          this.options.logger.warn({ reason, brokers: this.options.brokers }, 'kafka not reachable, retrying in the background');
        }
        failures++;
        this.lastError = reason;
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

  /** One cheap Metadata round trip through a separate admin client, bounded by PING_TIMEOUT_MS. */
  private async runProbe(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const op = (async () => {
      this.admin ??= this.kafka.admin({ retry: { retries: 0 } });
      if (!this.adminConnected) {
        await this.admin.connect();
        this.adminConnected = true;
      }
      const cluster = await this.admin.describeCluster();
      if (!cluster || cluster.brokers.length === 0) throw new Error('no brokers in metadata');
    })();
    this.probeOp = op.catch(() => undefined);
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timeout')), PING_TIMEOUT_MS);
    });
    try {
      await Promise.race([op, timeout]);
      this.probeResult = { at: Date.now() };
    } catch (error) {
      const message =
        error instanceof Error && error.message === 'timeout'
          ? 'kafka: no answer within 1 s'
          : error instanceof TypeError // kafkajs' describeCluster when no broker answered at all
            ? 'kafka: unreachable'
            : `kafka: ${describeKafkaError(error)}`;
      this.probeResult = { at: Date.now(), error: message };
      throw new Error(message);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Consecutive slices of at most maxRequestBytes (a single larger record is a slice of its own). */
  private chunk(records: OutRecord[]): OutRecord[][] {
    const chunks: OutRecord[][] = [];
    let current: OutRecord[] = [];
    let bytes = 0;
    for (const record of records) {
      const size = approximateBytes(record);
      if (current.length > 0 && bytes + size > this.maxRequestBytes) {
        chunks.push(current);
        current = [];
        bytes = 0;
      }
      current.push(record);
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
    const key = `${namespace}|${message}|${broker ?? ''}|${error ?? ''}`;
    const now = Date.now();
    const last = this.logged.get(key);
    if (last !== undefined && now - last < LOG_REPEAT_MS) return;
    if (this.logged.size > 200) this.logged.clear();
    this.logged.set(key, now);
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

/** How far one write() got: records refused one by one, whether the producer was replaced. */
interface WriteAttempt {
  failures: Map<number, PublishError>;
  replaced: boolean;
  /** Records [0, settled) of the write were acknowledged or failed alone; they are sent in order. */
  settled: number;
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
