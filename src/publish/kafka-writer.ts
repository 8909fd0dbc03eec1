import { CompressionTypes, type Message, type Producer, type TopicMessages } from 'kafkajs';
import type { Logger } from '../observability/logger';
import { PublishError } from './errors';
import type { KafkaConnection } from './kafka-connection';
import { classifyKafkaError, type KafkaFailure } from './kafka-errors';
import type { LogThrottle } from '../observability/log-throttle';
import type { ClusterProbe } from './kafka-probe';
import type { TopicWatcher } from './kafka-topics';
import { PartialWriteError, type OutRecord } from './sink';
import type { KafkaTiming } from './timing';

/** Per-record overhead in a Kafka record batch (varints, attributes, header framing), rounded up. */
const RECORD_OVERHEAD_BYTES = 100;

export interface KafkaWriterOptions {
  idempotent: boolean;
  compression: 'none' | 'gzip';
  logger: Logger;
  timing: KafkaTiming;
  /** Upper bound of the bytes handed to one sendBatch (see KafkaSettings). */
  maxRequestBytes: number;
}

/**
 * Writes a batch: one sendBatch (grouped by topic) per maxRequestBytes, with acks from all
 * in-sync replicas. A record the broker refuses as too large fails alone (PartialWriteError),
 * and so do the records of a missing topic; the rest is written.
 */
export class KafkaWriter {
  /** A request got no clear answer: nothing more is sent until the cluster answers a probe. */
  private suspect = false;
  /** An idempotent producer's sequence numbers may be out of step: the next write uses a new one. */
  private freshProducerNeeded = false;

  constructor(
    private readonly connection: KafkaConnection,
    private readonly probe: ClusterProbe,
    private readonly topics: TopicWatcher,
    private readonly throttle: LogThrottle,
    private readonly options: KafkaWriterOptions,
  ) {}

  async write(records: OutRecord[]): Promise<void> {
    if (records.length === 0) return;
    if (this.connection.closed) throw new PublishError('closed', 'kafka: sink is closed');
    // Records of a topic known to be missing fail at once; the others are sent.
    const outcome = new Map<number, PublishError | true>();
    const sendable: number[] = [];
    records.forEach((record, i) => {
      const refusal = this.topics.refusal(record.topic);
      if (refusal) outcome.set(i, refusal);
      else sendable.push(i);
    });
    let failure: PublishError | undefined;
    try {
      for (const chunk of chunks(sendable, records, this.options.maxRequestBytes)) await this.send(chunk, records, outcome);
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

  /** A write can be sent now: the cluster answers (after a request that did not) and a producer is connected. */
  async ready(): Promise<void> {
    await this.producerForWrite();
  }

  /**
   * The producer for the next request: after a request that got no clear answer, only once the
   * cluster answers a probe, and a new one when the last one's sequence numbers may be off.
   */
  private async producerForWrite(): Promise<Producer> {
    if (this.connection.closed) throw new PublishError('closed', 'kafka: sink is closed');
    if (this.suspect) {
      await this.probe.untilAnswered();
      this.suspect = false;
    }
    if (this.freshProducerNeeded) {
      this.freshProducerNeeded = false;
      this.connection.replaceProducer();
    }
    return this.connection.producerWithin(this.options.timing.sendBudgetMs);
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
        timeout: this.options.timing.requestTimeoutMs,
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
      if (producer === this.connection.current) {
        if (reason === 'unavailable') {
          this.suspect = true;
          if (this.options.idempotent) this.freshProducerNeeded = true;
        } else if (this.options.idempotent && reason === 'too_large') {
          this.connection.replaceProducer();
        }
      }
      if (reason === 'topic_missing') {
        if (topics.length === 1) {
          this.topics.mark(topics[0], failure.cause);
          for (const i of indices) outcome.set(i, this.topics.refusal(topics[0]) ?? failure.error);
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

  /** A failed request: a warning when it may pass by itself, an error when an operator must act. */
  private logFailure(failure: KafkaFailure, records: number, topics: string[]): void {
    const fields = { reason: (failure.error as PublishError).reason, cause: failure.cause, records, topics };
    if (failure.retriable) this.options.logger.warn(fields, 'kafka write failed');
    else if (this.throttle.firstInWindow(`write|${failure.cause}|${topics.join(',')}`)) this.options.logger.error(fields, 'kafka write failed');
  }
}

/** Consecutive slices of at most maxBytes (a single larger record is a slice of its own). */
function chunks(indices: number[], records: OutRecord[], maxBytes: number): number[][] {
  const result: number[][] = [];
  let current: number[] = [];
  let bytes = 0;
  for (const i of indices) {
    const size = approximateBytes(records[i]);
    if (current.length > 0 && bytes + size > maxBytes) {
      result.push(current);
      current = [];
      bytes = 0;
    }
    current.push(i);
    bytes += size;
  }
  if (current.length > 0) result.push(current);
  return result;
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
