import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from '../observability/logger';
import { HttpError } from './errors';
import { closeAfterLinger } from './lingering-close';

/** Unknown routes: the contract's 404 body. */
export const notFound: RequestHandler = (_req, _res, next) => {
  next(new HttpError('not_found', 'no such route'));
};

/** Renders every error with the contract's body; only unexpected errors are logged with a stack. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error, req, res, _next) => {
    const httpError = toHttpError(error);
    res.locals.outcome = httpError.outcome;
    res.locals.reason = httpError.reason;
    res.locals.refusalDetails = httpError.details;
    if (httpError.status >= 500 && !(error instanceof HttpError)) {
      logger.error({ reqId: res.locals.requestId, err: error }, 'unexpected error');
    }
    if (res.headersSent) {
      req.socket.destroy();
      return;
    }
    res.set(httpError.headers);
    // Refused before the body arrived in full: let the sender finish and read this answer.
    if (!req.complete) closeAfterLinger(req, res);
    res.status(httpError.status).json(httpError.body());
  };
}

/** Errors thrown by express's own body parser (admin API) carry a `type` and `status`. */
function toHttpError(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  const parserError = error as { type?: string; status?: number };
  if (parserError?.type === 'entity.too.large') return new HttpError('body_too_large', 'the body is too large');
  if (parserError?.type === 'entity.parse.failed') return new HttpError('invalid_json', 'malformed JSON body');
  if (parserError?.type === 'encoding.unsupported' || parserError?.type === 'charset.unsupported') {
    return new HttpError('unsupported_charset', 'unsupported body encoding');
  }
  if (parserError?.status && parserError.status >= 400 && parserError.status < 500) {
    return new HttpError('body_unreadable', 'the request could not be read');
  }
  return new HttpError('internal', 'internal error');
}
