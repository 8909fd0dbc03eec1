import type { OutRecord, Sink } from '../../src/publish/sink';

/** An in-memory Sink for in-process HTTP tests; can be told to fail or to hang. */
export class CaptureSink implements Sink {
  readonly name = 'capture';
  readonly records: OutRecord[] = [];
  mode: 'ack' | 'fail' | 'hang' = 'ack';
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
    if (this.mode === 'fail') throw new Error('capture sink refuses');
    if (this.mode === 'hang') return new Promise((_, reject) => this.hung.push(reject));
    this.records.push(...records);
  }

  /**
   * Makes every hung write fail now, as a real client does when its own request timeout
   * passes (kafkajs requestTimeout). Returns how many there were.
   */
  giveUpHungWrites(): number {
    const pending = this.hung.splice(0);
    for (const reject of pending) reject(new Error('capture sink: request timed out'));
    return pending.length;
  }

  /** The CloudEvents written so far. */
  events(): Array<Record<string, any>> {
    return this.records.map((r) => JSON.parse(r.value));
  }
}
