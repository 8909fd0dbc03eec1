import pino from 'pino';

/** What the lines are handed to: pino's destination (sonic-boom). */
export interface LineSink {
  write(text: string): unknown;
  flush(cb: (error?: Error) => void): void;
  flushSync(): void;
}

/**
 * Log lines collected and handed to pino's destination once per event-loop turn, joined: one
 * write for all the lines a turn produced instead of one each (profiled at 6,500 req/s: the
 * access log's write went from 6.7 µs to under 1 µs a request). At exit, and when pino flushes
 * for a fatal line, what is held is handed over at once.
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
 * Standard output, written synchronously (pino's default) once per turn. pino's asynchronous
 * mode was tried first: it re-measures the whole text waiting behind the write under way on
 * every line (`Buffer.byteLength` of a growing string), and at exit it cannot flush a write
 * still under way, so a crash's last lines could be lost or come out of order.
 */
export function stdoutDestination(): TurnBatchedDestination {
  return new TurnBatchedDestination(pino.destination({ sync: true }));
}
