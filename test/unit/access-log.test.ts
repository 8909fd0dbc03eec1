/**
 * The access log line is built as one template (src/http/access-log.ts): it must be the line
 * pino itself writes for the same fields through the product's logger, byte for byte but the
 * time.
 */
import { Writable } from 'node:stream';
import { accessLogger, type AccessLine } from '../../src/http/access-log';
import { createLogger } from '../../src/observability/logger';
import { loggerToLines } from '../helpers/log-lines';

const TIME = /"time":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"/;
const withoutTime = (line: string) => {
  expect(line).toMatch(TIME);
  return line.replace(TIME, '"time":"T"');
};

function pinoLine(line: AccessLine): string {
  const { logger, logLines } = loggerToLines();
  const { eventId, ...always } = line;
  logger.info({ ...always, ...(eventId && { eventId }) }, 'request');
  return logLines.join('');
}

function templateLine(line: AccessLine): string {
  const { logger, logLines } = loggerToLines();
  accessLogger(logger)(line);
  return logLines.join('');
}

const served: AccessLine = {
  reqId: '6f1c2a8e-2b7d-4c43-9a51-0d9e3f5a7b21',
  method: 'POST',
  path: '/api/webhooks/trigger/orders',
  route: 'webhook',
  status: 202,
  outcome: 'accepted',
  reason: 'accepted',
  ms: 3.4,
  eventId: 'c3a7e1d2-55aa-4b0e-8f3c-9e1d2c3b4a51',
};

describe('access log line', () => {
  it.each([
    ['an accepted request with its event id', served],
    ['a refusal without an event id', { ...served, status: 401, outcome: 'refused', reason: 'credentials_invalid', ms: 0, eventId: undefined }],
    ['a path and request id that need escaping', { ...served, reqId: 'id "quoted" \\ back', path: '/api/webhooks/trigger/a"b\u0001\u2028é😀', ms: 120 }],
    ['non-ASCII without control characters', { ...served, path: '/api/webhooks/trigger/é😀\u2028' }],
  ])('is the line pino writes: %s', (_name, line) => {
    const written = templateLine(line);
    expect(written.endsWith('\n')).toBe(true);
    expect(withoutTime(written)).toBe(withoutTime(pinoLine(line)));
    expect(JSON.parse(written)).toMatchObject({ level: 'info', service: 'ingress-gateway', msg: 'request', path: line.path, reqId: line.reqId });
  });

  // The one difference: pino writes a lone surrogate raw (it reaches the file as U+FFFD); the
  // template escapes it, as JSON.stringify does. HTTP input cannot carry one (Node decodes the
  // request line and headers as latin1), so a line of a real request is the same either way.
  it('escapes a lone surrogate, so the line still parses to the same string', () => {
    const line = { ...served, path: '/a\ud800b' };
    const written = templateLine(line);
    expect(written).toContain('"path":"/a\\ud800b"');
    expect(JSON.parse(written).path).toBe(line.path);
  });

  it('writes nothing when the level is above info', () => {
    const written: string[] = [];
    const logger = createLogger('warn', new Writable({ write: (chunk, _encoding, done) => (written.push(String(chunk)), done()) }));
    accessLogger(logger)(served);
    logger.warn('a warning');
    expect(written).toHaveLength(1);
    expect(JSON.parse(written[0])).toMatchObject({ level: 'warn', msg: 'a warning' });
  });
});
