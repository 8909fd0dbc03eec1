import { ERROR_CATALOGUE, OUTCOME_OF, type ErrorCode, type ErrorOutcome } from './codes';
import { REASONS, type Reason } from './reasons';

/** What a refusal tells the sender beyond its reason, when the catalogue cannot know it. */
export interface RefusalTerms {
  /** A wait only this refusal knows (a failed-authentication block): whole seconds. */
  retryAfterSeconds?: number;
  /** When it may be sent again (a rate limit's refill): the wait is counted from the moment it is answered. */
  retryAt?: Date;
  /** `method_not_allowed`: the methods the resource answers. */
  allow?: readonly string[];
  /** `credentials_invalid`: the authentication scheme the sender is asked for (a bearer token). */
  challenge?: 'Bearer';
}

/**
 * Why a request is not accepted, as the code below the routes says it (Sentry Relay's Outcome,
 * the OTel Collector's permanent/retryable consumer errors): a reason from the one catalogue
 * (src/outcomes/reasons.ts), a message and details for the sender. It holds no headers and
 * no body: src/http/errors.ts renders it (Retry-After, Allow, WWW-Authenticate, the contract's
 * body) from the catalogue and what the refusal carries.
 */
export class Refusal extends Error {
  readonly code: ErrorCode;
  /** The status the catalogue gives its code. */
  readonly status: number;
  readonly outcome: ErrorOutcome;
  /** Whether sending the same request again can succeed. */
  readonly retryable: boolean;
  readonly retryAfterSeconds?: number;
  readonly retryAt?: Date;
  readonly allow?: readonly string[];
  readonly challenge?: 'Bearer';

  constructor(
    readonly reason: Reason,
    message: string,
    /** More for the sender; an object gets `reason` added, a list (schema issues) is sent as it is. */
    readonly details?: Record<string, unknown> | unknown[],
    terms: RefusalTerms = {},
  ) {
    super(message);
    this.name = 'Refusal';
    this.code = REASONS[reason].code;
    this.status = ERROR_CATALOGUE[this.code].status;
    this.outcome = OUTCOME_OF[this.code];
    this.retryable = ERROR_CATALOGUE[this.code].retryable;
    if (terms.retryAfterSeconds !== undefined) this.retryAfterSeconds = terms.retryAfterSeconds;
    if (terms.retryAt) this.retryAt = terms.retryAt;
    if (terms.allow) this.allow = terms.allow;
    if (terms.challenge) this.challenge = terms.challenge;
  }
}

/** 405 `method_not_allowed`, with the methods the resource answers (its `Allow`): the same whether or not the resource exists. */
export function methodNotAllowed(allow: readonly string[] = ['POST']): Refusal {
  return new Refusal('method_not_allowed', `only ${allow.join(', ')} is accepted`, undefined, { allow });
}
