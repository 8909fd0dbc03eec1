/** The closed catalogue of error codes: each has one status and one retry advice. docs/errors.md's error table is checked against it. */
export const ERROR_CATALOGUE = {
  BAD_REQUEST: { status: 400, retryable: false },
  UNAUTHORIZED: { status: 401, retryable: false },
  FORBIDDEN: { status: 403, retryable: false },
  NOT_FOUND: { status: 404, retryable: false },
  METHOD_NOT_ALLOWED: { status: 405, retryable: false },
  REQUEST_TIMEOUT: { status: 408, retryable: true },
  CONFLICT: { status: 409, retryable: true },
  PAYLOAD_TOO_LARGE: { status: 413, retryable: false },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, retryable: false },
  RATE_LIMITED: { status: 429, retryable: true },
  INTERNAL_ERROR: { status: 500, retryable: true },
  SERVICE_UNAVAILABLE: { status: 503, retryable: true },
} as const;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/** The outcome of a refused request: the metric label and the log field. */
export type ErrorOutcome =
  | 'conflict'
  | 'rate_limited'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'timed_out'
  | 'invalid'
  | 'too_large'
  | 'unsupported'
  | 'unavailable'
  | 'error';

export const OUTCOME_OF: Record<ErrorCode, ErrorOutcome> = {
  BAD_REQUEST: 'invalid',
  UNAUTHORIZED: 'unauthorized',
  FORBIDDEN: 'forbidden',
  NOT_FOUND: 'not_found',
  METHOD_NOT_ALLOWED: 'method_not_allowed',
  REQUEST_TIMEOUT: 'timed_out',
  CONFLICT: 'conflict',
  PAYLOAD_TOO_LARGE: 'too_large',
  UNSUPPORTED_MEDIA_TYPE: 'unsupported',
  RATE_LIMITED: 'rate_limited',
  INTERNAL_ERROR: 'error',
  SERVICE_UNAVAILABLE: 'unavailable',
};
