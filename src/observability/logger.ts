import pino, { type Logger } from 'pino';
import { isoFormatter } from './iso-time';
import { stdoutDestination } from './log-destination';

export type { Logger };

/** Header and field names whose values never reach a log line, wherever they appear. */
const REDACT = [
  '*.authorization',
  '*.cookie',
  '*.token',
  '*.appSecret',
  '*.verifyToken',
  '*.password',
  '*["x-hub-signature-256"]',
  '*["x-api-key"]',
];

const lineTime = isoFormatter();

/** A line's `time` field as pino writes it (after `{"level":"…"`): pino.stdTimeFunctions.isoTime, formatted once per ms. */
export const timeField = (): string => `,"time":"${lineTime(Date.now())}"`;

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'ingress-gateway' },
      timestamp: timeField,
      redact: { paths: REDACT, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    destination ?? stdoutDestination(),
  );
}
