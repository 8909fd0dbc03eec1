import { ERROR_CATALOGUE, type ErrorCode } from '../outcomes/codes';
import { REASONS, type Reason } from '../outcomes/reasons';
import { ref, type JsonSchema } from './components';

type Header = { description: string; schema: JsonSchema };

export const HEADERS = {
  'X-Request-Id': { description: "the request's id (the caller's X-Request-Id when it is harmless)", schema: { type: 'string' } },
  'Retry-After': { description: 'whole seconds to wait before sending it again', schema: { type: 'integer', minimum: 0 } },
  'WWW-Authenticate': { description: 'Bearer (for a bearer token)', schema: { type: 'string' } },
  'X-Event-Id': { description: "the published event's id (its CloudEvents id and ce_id header)", schema: { type: 'string', format: 'uuid' } },
  'Idempotent-Replayed': { description: 'true when this is the first acknowledgement replayed for a retry', schema: { type: 'string', enum: ['true'] } },
  'X-RateLimit-Limit': { description: 'requests allowed in the most restrictive window', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'requests left in that window', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'when that window refills (ISO 8601)', schema: { type: 'string', format: 'date-time' } },
} as const satisfies Record<string, Header>;

export type HeaderName = keyof typeof HEADERS;

/** Headers a status carries besides X-Request-Id. */
const STATUS_HEADERS: Partial<Record<number, HeaderName[]>> = {
  401: ['WWW-Authenticate'],
  409: ['Retry-After'],
  429: ['Retry-After'],
  503: ['Retry-After'],
};

/** References to components.headers (the document's `HEADERS`). */
export function headers(names: readonly HeaderName[]): Record<string, JsonSchema> {
  return Object.fromEntries(['X-Request-Id' as HeaderName, ...names].map((name) => [name, { $ref: `#/components/headers/${name}` }]));
}

/** Reasons any request can get, whatever its operation: a bug, and a request with two Host headers. */
export const EVERY_OPERATION: readonly Reason[] = ['duplicate_host', 'internal'];

/**
 * Error responses for the reasons an operation can answer with, one per status, each a
 * reference into `responses` (components.responses): named after its code and, when it is
 * not every reason of that code, its reasons. Each lists its reasons with what they mean, and
 * its schema pins `error.code` and `details.reason` to them.
 */
export function errorResponses(
  reasons: readonly Reason[],
  extraHeaders: readonly HeaderName[],
  responses: Record<string, JsonSchema>,
): Record<string, JsonSchema> {
  const byStatus = new Map<number, Reason[]>();
  for (const reason of [...new Set([...reasons, ...EVERY_OPERATION])].sort()) {
    const status = ERROR_CATALOGUE[REASONS[reason].code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), reason]);
  }
  const refs: Record<string, JsonSchema> = {};
  for (const [status, group] of [...byStatus].sort(([a], [b]) => a - b)) {
    const code = REASONS[group[0]].code as ErrorCode;
    const all = (Object.keys(REASONS) as Reason[]).filter((reason) => REASONS[reason].code === code);
    // Ingress answers also carry the rate-limit headers: their responses are named apart.
    const family = extraHeaders.length > 0 ? 'Ingress' : '';
    const name = [family + pascalCode(code), ...(group.length === all.length ? [] : group)].join('.');
    responses[name] ??= errorResponse(code, group, [...(STATUS_HEADERS[status] ?? []), ...extraHeaders]);
    refs[String(status)] = { $ref: `#/components/responses/${name}` };
  }
  return refs;
}

function errorResponse(code: ErrorCode, reasons: Reason[], extraHeaders: HeaderName[]): JsonSchema {
  const retry = ERROR_CATALOGUE[code].retryable ? 'Send it again later.' : 'Do not send it again unchanged.';
  return {
    description: [`${code}. ${retry}`, ...reasons.map((reason) => `- \`${reason}\`: ${REASONS[reason].explain}`)].join('\n'),
    headers: headers(extraHeaders),
    content: {
      'application/json': {
        schema: {
          allOf: [ref('Error')],
          properties: {
            error: {
              properties: {
                code: { const: code },
                details: { anyOf: [{ type: 'array', items: {} }, { properties: { reason: { enum: reasons } } }] },
              },
            },
          },
        },
      },
    },
  };
}

/** SERVICE_UNAVAILABLE → ServiceUnavailable. */
function pascalCode(code: string): string {
  return code.toLowerCase().replace(/(^|_)([a-z])/g, (_m, _sep, c: string) => c.toUpperCase());
}
