import type { Lifecycle } from '../lifecycle';

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
 * a rejection means none of the batch may be reported as accepted.
 */
export interface Sink extends Lifecycle {
  readonly name: string;
  write(records: OutRecord[]): Promise<void>;
}
