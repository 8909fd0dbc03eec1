import type { Lifecycle } from '../lifecycle';
import type { PublishError } from './errors';

/** One record as it goes to Kafka (or the file sink). `value` is the serialised CloudEvent. */
export interface OutRecord {
  topic: string;
  key: string;
  headers: Record<string, string>;
  value: string;
}

/**
 * Where records end up. write() resolves only once every record of the batch is durably
 * acknowledged (fsync'd, or acked by all in-sync Kafka replicas) and rejects otherwise;
 * a rejection means none of the batch may be reported as accepted, except a
 * PartialWriteError, which names the records that failed: every other one was acknowledged.
 */
export interface Sink extends Lifecycle {
  readonly name: string;
  write(records: OutRecord[]): Promise<void>;
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
