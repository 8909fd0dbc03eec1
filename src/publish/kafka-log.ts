import { logLevel, type LogEntry, type logCreator } from 'kafkajs';
import { LogThrottle } from '../observability/log-throttle';
import type { Logger } from '../observability/logger';

/** The same log line is written at most once in this window (an outage repeats them). */
const LOG_REPEAT_MS = 30_000;

/** The throttle the Kafka sink's lines share: kafkajs' own and its write failures. */
export function kafkaLogThrottle(): LogThrottle {
  return new LogThrottle(LOG_REPEAT_MS, 200);
}

/** kafkajs' own log level for this logger: its INFO lines only when we log at debug. */
export function kafkajsLogLevel(logger: Logger): logLevel {
  return logger.isLevelEnabled('debug') ? logLevel.INFO : logLevel.WARN;
}

/** kafkajs log entries onto pino at warn or quieter; identical lines are not repeated within 30 s. */
export function kafkajsLogCreator(logger: Logger, throttle: LogThrottle): logCreator {
  return () =>
    ({ namespace, level, log }: LogEntry) => {
      const { message, broker, error, retryCount } = log;
      // Our retry budget is deliberately small; the sink replaces the producer after a failure instead.
      if (typeof message === 'string' && message.includes('Limiting retries for the idempotent producer')) return;
      if (!throttle.firstInWindow(`${namespace}|${message}|${broker ?? ''}|${error ?? ''}`)) return;
      const fields = { component: 'kafkajs', namespace, broker, error, retryCount };
      if (level === logLevel.ERROR || level === logLevel.WARN) logger.warn(fields, message);
      else logger.debug(fields, message);
    };
}
