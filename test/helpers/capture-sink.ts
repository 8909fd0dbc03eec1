import { PublishError } from '../../src/publish/errors';
import { PartialWriteError, type OutRecord, type Sink } from '../../src/publish/sink';

/** An in-memory Sink for in-process HTTP tests; can be told to fail or to hang. */
export class CaptureSink implements Sink {
  readonly name = 'capture';
  readonly records: OutRecord[] = [];
  mode: 'ack' | 'fail' | 'hang' = 'ack';
  /** In 'ack' mode, records for which this says true are refused alone (a PartialWriteError). */
  refuse?: (record: OutRecord) => PublishError['reason'] | undefined;
  writes = 0;
  /** Writes made in 'hang' mode, still pending; see giveUpHungWrites(). */
  private readonly hung: Array<(error: Error) => void> = [];

  async start(): Promise<void> {}
  async ping(): Promise<void> {
    if (this.mode !== 'ack') throw new Error('capture sink is down');
  }
  async close(): Promise<void> {}

  async write(records: OutRecord[]): Promise<void> {
    this.writes++;
    if (this.mode === 'fail') throw new PublishError('unavailable', 'capture sink refuses');
    if (this.mode === 'hang') return new Promise((_, reject) => this.hung.push(reject));
    const failures = new Map<number, PublishError>();
    records.forEach((record, i) => {
      const reason = this.refuse?.(record);
      if (reason) failures.set(i, new PublishError(reason, 'capture sink refuses this record'));
      else this.records.push(record);
    });
    if (failures.size > 0) throw new PartialWriteError(failures);
  }

  /** How many writes made in 'hang' mode are pending now (the sink holds their records). */
  get hungWrites(): number {
    return this.hung.length;
  }

  /**
   * Makes every hung write fail now, as a real client does when its own request timeout
   * passes (kafkajs requestTimeout). Returns how many there were.
   */
  giveUpHungWrites(): number {
    const pending = this.hung.splice(0);
    for (const reject of pending) reject(new PublishError('unavailable', 'capture sink: request timed out'));
    return pending.length;
  }

  /** The CloudEvents written so far. */
  events(): Array<Record<string, any>> {
    return this.records.map((r) => JSON.parse(r.value));
  }
}
