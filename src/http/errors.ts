import { REASONS, type Reason, type SuccessOutcome } from './reasons';

/** The closed catalogue of error codes. The README's error table is checked against it. */
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

/** Every request ends in exactly one outcome: the metric label and the log field. */
export type Outcome =
  | SuccessOutcome
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

const OUTCOME_OF: Record<ErrorCode, Outcome> = {
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

/** An error answer: its reason (REASONS) fixes the code, the status and the outcome. */
export class HttpError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly outcome: Outcome;

  constructor(
    readonly reason: Reason,
    message: string,
    /** More for the sender; an object gets `reason` added, a list (schema issues) is sent as it is. */
    readonly details?: Record<string, unknown> | unknown[],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
    this.code = REASONS[reason].code;
    this.status = ERROR_CATALOGUE[this.code].status;
    this.outcome = OUTCOME_OF[this.code];
  }

  /**
   * The contract's error body. `details.reason` is there whenever details are, or when the
   * code alone does not say why (a 404 is only ever `not_found`: its body stays bare).
   */
  body() {
    const { code, message, reason } = this;
    if (Array.isArray(this.details)) return { error: { code, message, details: this.details } };
    if (this.details === undefined && SOLE_REASON.has(reason)) return { error: { code, message } };
    return { error: { code, message, details: { reason, ...this.details } } };
  }
}

/** Reasons that are the only reason of their code. */
const SOLE_REASON = new Set(
  (Object.keys(REASONS) as Reason[]).filter((r) => Object.values(REASONS).filter((e) => e.code === REASONS[r].code).length === 1),
);
