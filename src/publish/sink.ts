import type { Lifecycle } from '../lifecycle';
import type { PublishError } from './errors';

/** One record as it goes to Kafka (or the file sink). `value` is the serialised CloudEvent. */
export interface OutRecord {
  topic: string;
  key: string;
  headers: Record<string, string>;
  value: string;
}

/** What a sink knows of a topic it writes to. */
export const TOPIC_STATES = ['present', 'missing', 'unauthorized', 'unknown'] as const;
export type TopicState = (typeof TOPIC_STATES)[number];

/**
 * Where records end up. write() resolves only once every record of the batch is durably
 * acknowledged (fsync'd, or acked by all in-sync Kafka replicas) and rejects otherwise;
 * a rejection means none of the batch may be reported as accepted, except a
 * PartialWriteError, which names the records that failed: every other one was acknowledged.
 * A failure of what the sink writes to is a PublishError (or a PartialWriteError of them);
 * anything else it throws is a bug.
 */
export interface Sink extends Lifecycle {
  readonly name: string;
  write(records: OutRecord[]): Promise<void>;
  /**
   * Resolves when a write can be sent now; rejects with a PublishError when it cannot (the
   * batch then fails without being sent). The batcher asks before it takes a batch, so that a
   * sink waiting for its broker holds records in the queue, where those whose senders gave up
   * are dropped, rather than in a batch that would be sent late.
   */
  ready?(): Promise<void>;
  /** The topics a sink checks (Kafka: both configured topics), for /readyz and the metrics. */
  topics?(): Record<string, TopicState>;
}

/**
 * write() acknowledged every record of the batch but those in `failures` (by index into the
 * records given to write()), e.g. one record the broker refused as too large.
 */
export class PartialWriteError extends Error {
  constructor(readonly failures: ReadonlyMap<number, PublishError>) {
    super(`${failures.size} record(s) of the batch were not acknowledged`);
    this.name = 'PartialWriteError';
  }
}
