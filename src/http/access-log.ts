import type { RequestHandler } from 'express';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import type { Outcome } from './errors';

/**
 * One log line and one metric sample per request, labelled with the route and the outcome.
 * The path is logged without its query string: query strings can carry verify tokens.
 */
export function accessLog(logger: Logger, metrics: Metrics): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route: string = res.locals.route ?? 'other';
      const outcome: Outcome = res.locals.outcome ?? (res.statusCode < 400 ? 'ok' : 'error');
      metrics.requests.inc({ route, outcome, status: res.statusCode });
      metrics.latency.observe({ route, outcome }, seconds);
      logger.info(
        {
          reqId: res.locals.requestId,
          method: req.method,
          path: req.path,
          route,
          status: res.statusCode,
          outcome,
          ms: Math.round(seconds * 1e4) / 10,
          ...(res.locals.eventId && { eventId: res.locals.eventId }),
        },
        'request',
      );
    });
    next();
  };
}
