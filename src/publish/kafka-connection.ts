import { Kafka, Partitioners, type Admin, type KafkaConfig, type logCreator, type logLevel, type Producer } from 'kafkajs';
import type { Logger } from '../observability/logger';
import { waitAtMost } from '../wait-at-most';
import { PublishError } from './errors';
import { classifyKafkaError, describeKafkaError } from './kafka-errors';
import type { KafkaTiming } from './timing';

export interface KafkaSasl {
  mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512';
  username: string;
  password: string;
}

/** Where the brokers are and how to reach them. */
export interface KafkaClientOptions {
  brokers: string[];
  clientId: string;
  /** TLS to the brokers (the system's CAs, or NODE_EXTRA_CA_CERTS). */
  ssl?: boolean;
  sasl?: KafkaSasl;
}

export interface KafkaConnectionOptions extends KafkaClientOptions {
  /** kafkajs idempotent producer; needs a broker that answers InitProducerId. */
  idempotent: boolean;
  logger: Logger;
  timing: KafkaTiming;
  kafkajsLog: { level: logLevel; creator: logCreator };
  /** Called once for every Produce request the producer sends (batching metric). */
  onProduceRequest?: () => void;
  /** Called each time a producer has connected. */
  onConnected?: () => void;
}

const RECONNECT_MIN_MS = 200;
const RECONNECT_MAX_MS = 5000;

/** The kafkajs client configuration: brokers, TLS, SASL and the derived timeouts. */
export function kafkaClientConfig(options: KafkaClientOptions, timing: KafkaTiming): KafkaConfig {
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
 * The Kafka clients: one producer, connected in the background with backoff and replaced on
 * demand, and one admin client for metadata. close() disconnects every client it ever made.
 */
export class KafkaConnection {
  private readonly kafka: Kafka;
  private producer?: Producer;
  /** Counts replacements: a connection loop serves one generation. */
  private generation = 0;
  private admin?: Admin;
  private adminConnected = false;
  private connectedNow = false;
  private closedNow = false;
  private lastError?: string;
  private loop?: Promise<void>;
  private wake?: () => void;
  private readonly retiring = new Set<Promise<void>>();

  constructor(private readonly options: KafkaConnectionOptions) {
    this.kafka = new Kafka({
      ...kafkaClientConfig(options, options.timing),
      logLevel: options.kafkajsLog.level,
      logCreator: options.kafkajsLog.creator,
    });
  }

  get connected(): boolean {
    return this.connectedNow;
  }

  get closed(): boolean {
    return this.closedNow;
  }

  /** Settles when the current connection attempt has (or has given up). */
  get connecting(): Promise<void> | undefined {
    return this.loop;
  }

  /** The producer requests go through now (compared after a failure: was it replaced meanwhile?). */
  get current(): Producer | undefined {
    return this.producer;
  }

  /** Cuts the reconnect backoff short: the next attempt starts now. */
  wakeUp(): void {
    this.wake?.();
  }

  notConnected(): PublishError {
    return new PublishError('unavailable', `kafka: not connected${this.lastError ? ` (${this.lastError})` : ''}`);
  }

  /**
   * The connected producer. One that is still connecting (after a failed write replaced it,
   * or a broker that stopped answering) is waited for, at most `budgetMs`: the batch is held,
   * never sent to a broker that does not answer, and goes as soon as the broker does. While
   * connections are refused outright it fails at once.
   */
  async producerWithin(budgetMs: number): Promise<Producer> {
    if (this.producer && this.connectedNow) return this.producer;
    this.wake?.(); // try to connect now rather than after the backoff
    const refused = this.lastError?.startsWith('connection error E') ?? false;
    if (this.producer && !refused) {
      await waitAtMost(this.loop, budgetMs);
      if (this.closedNow) throw new PublishError('closed', 'kafka: sink is closed');
      if (this.producer && this.connectedNow) return this.producer;
    }
    throw this.notConnected();
  }

  /**
   * A new producer (at start, or after a failed write), connected in the background. Each
   * connection attempt uses a producer of its own: kafkajs takes a connection left half open
   * by a failed attempt (TCP up, ApiVersions never answered by a stalled broker) for a
   * connected one.
   */
  replaceProducer(): void {
    this.retire(this.producer);
    this.connectedNow = false;
    const generation = ++this.generation;
    this.producer = this.createProducer();
    const previous = this.loop ?? Promise.resolve();
    this.loop = previous.then(() => this.connectLoop(generation));
  }

  async connectedAdmin(): Promise<Admin> {
    if (this.admin && this.adminConnected) return this.admin;
    const admin = (this.admin ??= this.kafka.admin({ retry: { retries: 0 } }));
    await admin.connect();
    if (this.admin === admin) this.adminConnected = true;
    return admin;
  }

  /** An admin that could not connect is dropped, so that the next use starts from nothing (kafkajs would take its half-open connection for a good one). */
  dropUnconnectedAdmin(): void {
    if (this.adminConnected) return;
    const admin = this.admin;
    this.admin = undefined;
    this.retire(admin);
  }

  /** Disconnects every client; `inFlight` names other work under way that may open sockets meanwhile. */
  async close(inFlight: () => Array<Promise<unknown> | undefined>): Promise<void> {
    this.closedNow = true;
    this.connectedNow = false;
    this.wake?.();
    const disconnectAll = () =>
      Promise.allSettled([this.producer?.disconnect(), this.adminConnected ? this.admin?.disconnect() : undefined]);
    await disconnectAll();
    // A connection attempt, probe or topic check that was under way may have opened sockets since.
    await Promise.allSettled([this.loop, ...inFlight(), ...this.retiring]);
    await disconnectAll();
    this.producer = undefined;
    this.admin = undefined;
  }

  private retire(client: Producer | Admin | undefined): void {
    if (!client) return;
    const retired = client
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
      retry: this.options.timing.retry,
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
    while (!this.closedNow && this.generation === generation) {
      const producer = this.producer!;
      try {
        await producer.connect();
        if (this.closedNow || this.generation !== generation) {
          await producer.disconnect().catch(() => undefined);
          return;
        }
        this.connectedNow = true;
        this.lastError = undefined;
        this.options.logger.info({ brokers: this.options.brokers, idempotent: this.options.idempotent }, 'kafka connected');
        this.options.onConnected?.();
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
        if (this.closedNow || this.generation !== generation) return;
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
}
