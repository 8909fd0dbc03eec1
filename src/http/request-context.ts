import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { DeliveryLog } from '../delivery-log/delivery-log';
import type { ProcessState } from '../lifecycle';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import { accessLogger, logWhenFinished } from './access-log';
import { keepHeader, keepHeaders } from './answer-headers';
import { openContext } from './context';
import { recordDeliveryWhenDone } from './delivery-record';
import { requestIdFor } from './request-id';
import { securityHeaders, type Header } from './security-headers';
import { duplicateHost } from './single-host';

/**
 * What every request gets before routing, in one middleware (each express layer costs a
 * little on every request): the listener's security headers, a request id echoed in
 * X-Request-Id, an access log line when it is done, `Connection: close` while the process
 * drains, and 400 to a request with two Host headers.
 */
export function requestContext(
  deps: { logger: Logger; metrics: Metrics; lifecycle: ProcessState; deliveryLog?: DeliveryLog },
  headers: Header[] = securityHeaders(),
  then: (req: Request, res: Response, next: NextFunction) => void = (_req, _res, next) => next(),
): RequestHandler {
  const accessLog = accessLogger(deps.logger);
  const flatHeaders = headers.flat();
  // Named: the webhook fast path's guard (test/http/app-entry-layers.test.ts) finds it in the app's stack by name.
  return function requestContext(req, res, next) {
    // A request pipelined behind one that was answered with `Connection: close` (its socket is
    // half-closed) could never be answered: it is not served.
    if (!req.socket.writable) return void req.socket.destroy();
    keepHeaders(res, flatHeaders);
    const id = requestIdFor(req.headers['x-request-id']);
    openContext(res, id);
    keepHeader(res, 'X-Request-Id', id);
    if (deps.lifecycle.draining) res.setHeader('Connection', 'close');
    logWhenFinished(accessLog, deps.metrics, req, res);
    if (deps.deliveryLog) recordDeliveryWhenDone(deps.deliveryLog, req, res);
    const refusal = duplicateHost(req.rawHeaders);
    if (refusal) {
      res.setHeader('Connection', 'close'); // a request framed this oddly: the connection is not reused
      return next(refusal);
    }
    then(req, res, next);
  };
}
