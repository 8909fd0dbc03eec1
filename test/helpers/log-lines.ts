import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/observability/logger';
import { waitUntil } from './wait';

/**
 * The product's logger (same redaction), writing every line into an array for assertions.
 * The stream is synchronous: a line is in the array as soon as the logger call returns.
 */
export function loggerToLines(): { logger: Logger; logLines: string[] } {
  const logLines: string[] = [];
  const logger = createLogger(
    'info',
    new Writable({
      write(chunk, _encoding, done) {
        logLines.push(String(chunk));
        done();
      },
    }),
  );
  return { logger, logLines };
}

export type LogRecord = Record<string, any>;

/** Every line written so far, parsed. */
export function parsedLines(logLines: string[]): LogRecord[] {
  return logLines.flatMap((chunk) => chunk.split('\n').filter(Boolean)).map((line) => JSON.parse(line) as LogRecord);
}

/**
 * The access log line of each request id, once every one is written. The access log writes
 * on the response's 'finish', which the client can see after it has read the answer, so a
 * test reads the log only once the lines it asserts on are there.
 */
export async function accessLinesOf(logLines: string[], requestIds: string[]): Promise<LogRecord[]> {
  const find = () => {
    const lines = parsedLines(logLines).filter((line) => line.msg === 'request');
    return requestIds.map((id) => lines.find((line) => line.reqId === id));
  };
  await waitUntil(() => find().every(Boolean), `access log lines of ${requestIds.join(', ')}`);
  return find() as LogRecord[];
}
