import { REASONS, type Reason, type ReasonEntry } from '../outcomes/reasons';
import type { Refusal } from '../outcomes/refusal';

/** A refusal as the sender reads it: the status and headers the catalogue and the refusal say, and the contract's body. */
export interface RenderedRefusal {
  status: number;
  headers: Record<string, string>;
  body: ErrorBody;
}

export interface ErrorBody {
  error: { code: string; message: string; details?: Record<string, unknown> | unknown[] };
}

export function renderRefusal(refusal: Refusal): RenderedRefusal {
  const headers = refusalHeaders(refusal);
  const body = errorBody(refusal);
  const wait = headers['Retry-After'];
  if (refusal.status === 429 && wait !== undefined && body.error.details && !Array.isArray(body.error.details)) {
    // Every 429 says when to come back twice: `Retry-After` in seconds, `details.retryAfter` as a
    // time (contract §6): the refusal's own (a window's reset), else the wait from now.
    const at = refusal.retryAt ?? new Date(Date.now() + Number(wait) * 1000);
    body.error.details.retryAfter = at.toISOString();
  }
  return { status: refusal.status, headers, body };
}

/**
 * The contract's error body. `details.reason` is there whenever details are, or when the
 * code alone does not say why (a 404 is only ever `not_found`: its body stays bare).
 */
export function errorBody(refusal: Refusal): ErrorBody {
  const { code, message, reason, details } = refusal;
  if (Array.isArray(details)) return { error: { code, message, details } };
  if (details === undefined && SOLE_REASON.has(reason)) return { error: { code, message } };
  return { error: { code, message, details: { reason, ...details } } };
}

function refusalHeaders(refusal: Refusal): Record<string, string> {
  const headers: Record<string, string> = {};
  const wait = retryAfterSeconds(refusal);
  if (wait !== undefined) headers['Retry-After'] = String(wait);
  if (refusal.allow) headers.Allow = refusal.allow.join(', ');
  if (refusal.challenge) headers['WWW-Authenticate'] = refusal.challenge;
  return headers;
}

/** The refusal's own wait first (a rate limit's window), else the catalogue's; at least a second when one is due. */
function retryAfterSeconds(refusal: Refusal): number | undefined {
  if (refusal.retryAfterSeconds !== undefined) return refusal.retryAfterSeconds;
  if (refusal.retryAt) return Math.max(1, Math.ceil((refusal.retryAt.getTime() - Date.now()) / 1000));
  const fixed = (REASONS[refusal.reason] as ReasonEntry).retryAfter;
  if (fixed === 'computed') return 1;
  return fixed;
}

/** Reasons that are the only reason of their code. */
const SOLE_REASON = new Set(
  (Object.keys(REASONS) as Reason[]).filter((r) => Object.values(REASONS).filter((e) => e.code === REASONS[r].code).length === 1),
);
