/** The closed catalogue of error codes. The README's error table is checked against it. */
export const ERROR_CATALOGUE = {
  BAD_REQUEST: { status: 400, retryable: false },
  UNAUTHORIZED: { status: 401, retryable: false },
  FORBIDDEN: { status: 403, retryable: false },
  NOT_FOUND: { status: 404, retryable: false },
  METHOD_NOT_ALLOWED: { status: 405, retryable: false },
  CONFLICT: { status: 409, retryable: true },
  PAYLOAD_TOO_LARGE: { status: 413, retryable: false },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, retryable: false },
  RATE_LIMITED: { status: 429, retryable: true },
  INTERNAL_ERROR: { status: 500, retryable: true },
  SERVICE_UNAVAILABLE: { status: 503, retryable: true },
} as const;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/** Every request ends in exactly one outcome: the metric label and the log field. */
export type Outcome =
  | 'accepted'
  | 'duplicate'
  | 'conflict'
  | 'rate_limited'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'invalid'
  | 'too_large'
  | 'unsupported'
  | 'unavailable'
  | 'error'
  | 'ok';

const OUTCOME_OF: Record<ErrorCode, Outcome> = {
  BAD_REQUEST: 'invalid',
  UNAUTHORIZED: 'unauthorized',
  FORBIDDEN: 'forbidden',
  NOT_FOUND: 'not_found',
  METHOD_NOT_ALLOWED: 'method_not_allowed',
  CONFLICT: 'conflict',
  PAYLOAD_TOO_LARGE: 'too_large',
  UNSUPPORTED_MEDIA_TYPE: 'unsupported',
  RATE_LIMITED: 'rate_limited',
  INTERNAL_ERROR: 'error',
  SERVICE_UNAVAILABLE: 'unavailable',
};

export class HttpError extends Error {
  readonly status: number;
  readonly outcome: Outcome;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
    this.status = ERROR_CATALOGUE[code].status;
    this.outcome = OUTCOME_OF[code];
  }
}

export function errorBody(code: ErrorCode, message: string, details?: unknown) {
  return { error: details === undefined ? { code, message } : { code, message, details } };
}
