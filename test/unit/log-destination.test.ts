import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { TurnBatchedDestination, type LineSink } from '../../src/observability/log-destination';

const run = promisify(execFile);

/** A sink that keeps what it is handed, and whether it was flushed. */
function recordingSink() {
  const writes: string[] = [];
  const sink: LineSink & { flushedSync: number } = {
    flushedSync: 0,
    write: (text) => writes.push(text),
    flush: (cb) => cb(),
    flushSync() {
      this.flushedSync++;
    },
  };
  return { sink, writes };
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('the log destination hands lines over once per event-loop turn', () => {
  it('joins the lines of one turn into one write, in order', async () => {
    const { sink, writes } = recordingSink();
    const destination = new TurnBatchedDestination(sink);
    destination.write('a\n');
    destination.write('b\n');
    destination.write('c\n');
    expect(writes).toEqual([]);
    await nextTurn();
    expect(writes).toEqual(['a\nb\nc\n']);
    destination.write('d\n');
    await nextTurn();
    expect(writes).toEqual(['a\nb\nc\n', 'd\n']);
  });

  it('flush and flushSync hand over what is held before flushing the sink', async () => {
    const { sink, writes } = recordingSink();
    const destination = new TurnBatchedDestination(sink);
    destination.write('a\n');
    destination.flushSync();
    expect(writes).toEqual(['a\n']);
    expect(sink.flushedSync).toBe(1);
    destination.write('b\n');
    await new Promise<void>((resolve) => destination.flush(() => resolve()));
    expect(writes).toEqual(['a\n', 'b\n']);
    await nextTurn();
    expect(writes).toEqual(['a\n', 'b\n']); // nothing handed over twice
  });
});

describe('a process that exits in the turn it logged still writes the line', () => {
  const logger = JSON.stringify(join(__dirname, '..', '..', 'dist', 'observability', 'logger.js'));

  it.each([
    ['process.exit', `log.info('one'); log.warn('two'); process.exit(3);`, 3],
    ['process.exit after a fatal line (pino flushes at fatal)', `log.info('one'); log.fatal('two'); process.exit(3);`, 3],
    ['an uncaught exception', `process.on('uncaughtException', (e) => { log.fatal({ err: e }, 'two'); process.exit(1); }); log.info('one'); setImmediate(() => { throw new Error('boom'); });`, 1],
    ['the event loop running dry', `log.info('one'); log.info('two');`, 0],
  ])('%s', async (_how, script, code) => {
    const child = await run(process.execPath, ['-e', `const log = require(${logger}).createLogger('info'); ${script}`]).then(
      (done) => ({ stdout: done.stdout, code: 0 }),
      (failed: { stdout: string; code: number }) => ({ stdout: failed.stdout, code: failed.code }),
    );
    expect(child.code).toBe(code);
    expect(child.stdout.trim().split('\n').map((line) => JSON.parse(line).msg)).toEqual(['one', 'two']);
  });
});
