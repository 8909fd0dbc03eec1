import pino from 'pino';

/** What the lines are handed to: pino's asynchronous destination (sonic-boom). */
export interface LineSink {
  write(text: string): unknown;
  flush(cb: (error?: Error) => void): void;
  flushSync(): void;
}

/**
 * pino's asynchronous destination appends each line to the text still waiting for the write
 * under way and measures the whole of it again (`Buffer.byteLength` of a growing string): at
 * thousands of lines a second that took about 5 µs a line. Lines are collected here and handed
 * over once per event-loop turn, joined. At exit, what is held is written synchronously.
 */
export class TurnBatchedDestination {
  private pending: string[] = [];

  constructor(private readonly sink: LineSink) {
    flushedAtExit.add(new WeakRef(this));
  }

  write(line: string): void {
    if (this.pending.push(line) === 1) setImmediate(this.handOver);
  }

  /** pino's `logger.flush(cb)`: everything written so far reaches the file descriptor, then `cb`. */
  flush(cb: (error?: Error) => void): void {
    this.handOver();
    this.sink.flush(cb);
  }

  flushSync(): void {
    this.handOver();
    this.sink.flushSync();
  }

  private readonly handOver = (): void => {
    if (this.pending.length === 0) return;
    const text = this.pending.length === 1 ? this.pending[0] : this.pending.join('');
    this.pending = [];
    this.sink.write(text);
  };
}

const flushedAtExit = new Set<WeakRef<TurnBatchedDestination>>();
process.on('exit', () => {
  for (const ref of flushedAtExit) {
    try {
      ref.deref()?.flushSync();
    } catch {
      // stdout already closed: nothing more can be written
    }
  }
});

/**
 * Standard output, batched per turn. pino's exit hook only flushes its destination (it stays
 * open), so whichever of the two hooks runs first, the last turn's lines are written.
 */
export function stdoutDestination(): TurnBatchedDestination {
  return new TurnBatchedDestination(pino.destination({ sync: false }));
}
