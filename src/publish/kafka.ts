import type { Logger } from '../observability/logger';
import { waitAtMost } from '../wait-at-most';
import { KafkaConnection, type KafkaSasl } from './kafka-connection';
import { kafkaLogThrottle, kafkajsLogCreator, kafkajsLogLevel } from './kafka-log';
import { ClusterProbe } from './kafka-probe';
import { TopicWatcher } from './kafka-topics';
import { KafkaWriter } from './kafka-writer';
import type { OutRecord, Sink, TopicState } from './sink';
import { kafkaTiming, type KafkaTiming } from './timing';

export { kafkaClientConfig, type KafkaSasl } from './kafka-connection';

/** The Kafka sink's section of the settings (the container builds it from KAFKA_*, TOPIC_* and PUBLISH_TIMEOUT_MS). */
export interface KafkaSettings {
  brokers: string[];
  clientId: string;
  /** kafkajs idempotent producer; needs a broker that answers InitProducerId. */
  idempotent: boolean;
  compression: 'none' | 'gzip';
  /** The topics the gateway writes to: checked once connected and reported, never created. */
  topics?: string[];
  /** kafkajs' timeouts and retries, derived from PUBLISH_TIMEOUT_MS. Default: those of 5 s. */
  timing?: KafkaTiming;
  /** TLS to the brokers (the system's CAs, or NODE_EXTRA_CA_CERTS). */
  ssl?: boolean;
  sasl?: KafkaSasl;
  /**
   * Upper bound of the bytes handed to one sendBatch. Kafka refuses a record batch (all the
   * records of one partition in one request) over message.max.bytes (1 MiB by default), so a
   * larger write is sent as several consecutive requests. Default 1_000_000.
   */
  maxRequestBytes?: number;
}

/** What the Kafka sink reports to: the log and the metrics. */
export interface KafkaSinkDeps {
  logger: Logger;
  /** Called once for every Produce request the producer sends (batching metric). */
  onProduceRequest?: () => void;
  /** Called when what is known of a topic changes (metric). */
  onTopicState?: (topic: string, state: TopicState) => void;
}

const DEFAULT_PUBLISH_TIMEOUT_MS = 5000;
/** start() waits this long at most for the first connection and topic check, then goes on in the background. */
const START_WAIT_MS = 1000;

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
 *
 * Five parts, one job each: the connection (kafka-connection.ts), the writer
 * (kafka-writer.ts), the health probe (kafka-probe.ts), the topic watcher (kafka-topics.ts)
 * and the log throttle (kafka-log.ts).
 */
export class KafkaSink implements Sink {
  readonly name = 'kafka';
  private readonly connection: KafkaConnection;
  private readonly probe: ClusterProbe;
  private readonly watcher: TopicWatcher;
  private readonly writer: KafkaWriter;
  private started = false;
  private closing?: Promise<void>;

  constructor(settings: KafkaSettings, deps: KafkaSinkDeps) {
    const timing = settings.timing ?? kafkaTiming(DEFAULT_PUBLISH_TIMEOUT_MS);
    const { logger } = deps;
    const throttle = kafkaLogThrottle();
    this.connection = new KafkaConnection({
      ...settings,
      logger,
      timing,
      onProduceRequest: deps.onProduceRequest,
      kafkajsLog: { level: kafkajsLogLevel(logger), creator: kafkajsLogCreator(logger, throttle) },
      onConnected: () => this.watcher.checkUnknown(),
    });
    this.probe = new ClusterProbe(this.connection, timing);
    this.watcher = new TopicWatcher(settings.topics ?? [], this.connection, logger, deps.onTopicState);
    this.writer = new KafkaWriter(this.connection, this.probe, this.watcher, throttle, {
      idempotent: settings.idempotent,
      compression: settings.compression,
      logger,
      timing,
      maxRequestBytes: settings.maxRequestBytes ?? 1_000_000,
    });
  }

  async start(): Promise<void> {
    if (this.started || this.connection.closed) return;
    this.started = true;
    this.connection.replaceProducer();
    // Give a reachable cluster a moment, so that a fresh process has connected and checked
    // its topics before it serves; an unreachable one does not hold the start up.
    const ready = (async () => {
      await this.connection.connecting;
      await this.watcher.inFlight;
    })();
    await waitAtMost(ready, START_WAIT_MS);
  }

  async ping(): Promise<void> {
    if (this.connection.closed) throw new Error('kafka: closed');
    if (!this.started) throw new Error('kafka: not started');
    if (!this.connection.connected) {
      this.connection.wakeUp(); // a readiness probe also cuts the reconnect backoff short
      throw new Error(this.connection.notConnected().message);
    }
    return this.probe.check();
  }

  /** What is known of each configured topic: `unknown` until checked. */
  topics(): Record<string, TopicState> {
    return this.watcher.states();
  }

  write(records: OutRecord[]): Promise<void> {
    return this.writer.write(records);
  }

  /** A write can be sent now: the cluster answers (after a request that did not) and a producer is connected. */
  ready(): Promise<void> {
    return this.writer.ready();
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.watcher.stop();
    await this.connection.close(() => [this.probe.inFlight, this.watcher.inFlight]);
  }
}
