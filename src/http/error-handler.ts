import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from '../observability/logger';
import { Refusal } from '../outcomes/refusal';
import { contextOf } from './context';
import { renderRefusal } from './errors';
import { closeAfterLinger } from './lingering-close';

/** Unknown routes: the contract's 404 body. */
export const notFound: RequestHandler = (_req, _res, next) => {
  next(new Refusal('not_found', 'no such route'));
};

/** Renders every error with the contract's body; only unexpected errors are logged with a stack. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  // Named: the webhook fast path's guard (test/http/app-entry-layers.test.ts) finds it in the app's stack by name.
  return function errorHandler(error, req, res, _next) {
    const refusal = toRefusal(error);
    const context = contextOf(res);
    context.outcome = refusal.outcome;
    context.reason = refusal.reason;
    context.refusalDetails = refusal.details;
    if (!(error instanceof Refusal) && refusal.reason === 'internal') {
      logger.error({ reqId: context.requestId, err: error }, 'unexpected error');
    }
    if (res.headersSent) {
      req.socket.destroy();
      return;
    }
    const { status, headers, body } = renderRefusal(refusal);
    res.set(headers);
    // Refused before the body arrived in full: let the sender finish and read this answer.
    if (!req.complete) closeAfterLinger(req, res);
    res.status(status).json(body);
  };
}

/** Errors thrown by express's own body parser (admin API) carry a `type` and `status`. */
function toRefusal(error: unknown): Refusal {
  if (error instanceof Refusal) return error;
  const parserError = error as { type?: string; status?: number };
  if (parserError?.type === 'entity.too.large') return new Refusal('body_too_large', 'the body is too large');
  if (parserError?.type === 'entity.parse.failed') return new Refusal('invalid_json', 'malformed JSON body');
  if (parserError?.type === 'encoding.unsupported' || parserError?.type === 'charset.unsupported') {
    return new Refusal('unsupported_charset', 'unsupported body encoding');
  }
  if (parserError?.status && parserError.status >= 400 && parserError.status < 500) {
    return new Refusal('body_unreadable', 'the request could not be read');
  }
  return new Refusal('internal', 'internal error');
}
