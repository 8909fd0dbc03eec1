import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from '../observability/logger';
import { errorBody, HttpError } from './errors';

/** Unknown routes: the contract's 404 body. */
export const notFound: RequestHandler = (_req, _res, next) => {
  next(new HttpError('NOT_FOUND', 'no such route'));
};

/** Renders every error with the contract's body; only unexpected errors are logged with a stack. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error, req, res, _next) => {
    const httpError = toHttpError(error);
    res.locals.outcome = httpError.outcome;
    if (httpError.status >= 500 && !(error instanceof HttpError)) {
      logger.error({ reqId: res.locals.requestId, err: error }, 'unexpected error');
    }
    if (res.headersSent) {
      req.socket.destroy();
      return;
    }
    res.set(httpError.headers);
    res.status(httpError.status).json(errorBody(httpError.code, httpError.message, httpError.details));
  };
}

/** Errors thrown by express's own body parser (admin API) carry a `type` and `status`. */
function toHttpError(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  const parserError = error as { type?: string; status?: number };
  if (parserError?.type === 'entity.too.large') return new HttpError('PAYLOAD_TOO_LARGE', 'the body is too large');
  if (parserError?.type === 'entity.parse.failed') return new HttpError('BAD_REQUEST', 'malformed JSON body');
  if (parserError?.type === 'encoding.unsupported' || parserError?.type === 'charset.unsupported') {
    return new HttpError('UNSUPPORTED_MEDIA_TYPE', 'unsupported body encoding');
  }
  if (parserError?.status && parserError.status >= 400 && parserError.status < 500) {
    return new HttpError('BAD_REQUEST', 'the request could not be read');
  }
  return new HttpError('INTERNAL_ERROR', 'internal error');
}
