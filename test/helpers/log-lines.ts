import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/observability/logger';

/** The product's logger (same redaction), writing every line into an array for assertions. */
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
