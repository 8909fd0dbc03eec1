import type { ErrorCode, ErrorOutcome } from './codes';

/** The wait a refusal to send it again soon asks for, when the catalogue fixes it (503s and their kin). */
export const RETRY_AFTER_SECONDS = 2;

export interface ReasonEntry {
  code: ErrorCode;
  /** One line: what happened, for the README's table (and the reader of a log line). */
  explain: string;
  /**
   * The Retry-After the sender gets: whole seconds, or `computed` when only the refusal knows
   * the wait (a rate limit's window): it carries it. Absent: no Retry-After.
   */
  retryAfter?: number | 'computed';
}

/**
 * The closed catalogue of why a request was not accepted (Sentry Relay's Outcome /
 * DiscardReason is the model). Each reason has one error code, so one status and one
 * retry advice (ERROR_CATALOGUE), and says whether the sender is told when to send it again
 * (Retry-After); it is the `details.reason` of the error body, the
 * `reason` label of igw_http_requests_total and the `reason` field of the access log.
 * docs/errors.md's reason table is checked against this object. Keep entries alphabetical
 * within their status group.
 */
export const REASONS = {
  // 400
  body_unreadable: { code: 'BAD_REQUEST', explain: 'the connection ended before the body was read' },
  duplicate_host: { code: 'BAD_REQUEST', explain: 'the request has more than one Host header (RFC 9112 §3.2)' },
  file_value_not_allowed: { code: 'BAD_REQUEST', explain: 'the request carries a file value only the gateway may mint (type url anywhere in the body, or formed by the query or the headers; details.path; or in a file[] field a scheme other than data:)' },
  invalid_encoding: { code: 'BAD_REQUEST', explain: 'the body (or a text part) is not valid in its charset' },
  invalid_field: { code: 'BAD_REQUEST', explain: "a field's value cannot be the type inputFormat declares" },
  invalid_handshake: { code: 'BAD_REQUEST', explain: 'a verification handshake lacks a parameter or has an unsafe one' },
  invalid_json: { code: 'BAD_REQUEST', explain: 'the body is not JSON, or nests deeper than 256 levels' },
  invalid_multipart: { code: 'BAD_REQUEST', explain: 'the multipart body is malformed' },
  invalid_parameter: { code: 'BAD_REQUEST', explain: 'a path segment or query parameter is malformed' },
  invalid_schema: { code: 'BAD_REQUEST', explain: 'the body does not match the schema' },
  key_too_long: { code: 'BAD_REQUEST', explain: 'the idempotency key is longer than 255 characters' },
  kind_too_long: { code: 'BAD_REQUEST', explain: "a verified provider delivery's event kind is longer than 256 characters" },
  schema_invalid: { code: 'BAD_REQUEST', explain: "the input does not satisfy the trigger's JSON Schema (details.errors)" },
  schema_too_complex: { code: 'BAD_REQUEST', explain: "a trigger's JSON Schema cannot be compiled within its time and memory budget (PUT)" },
  // 401
  credentials_invalid: { code: 'UNAUTHORIZED', explain: 'the token is missing or wrong' },
  key_url_not_allowed: { code: 'UNAUTHORIZED', explain: "a key or certificate URL in the request is not on the preset's allow-list; nothing was fetched" },
  signature_invalid: { code: 'UNAUTHORIZED', explain: 'the signature does not match the body' },
  signature_missing: { code: 'UNAUTHORIZED', explain: 'the signature header is missing or malformed' },
  timestamp_missing: { code: 'UNAUTHORIZED', explain: 'the scheme signs a timestamp but the signed material carries none' },
  timestamp_out_of_tolerance: { code: 'UNAUTHORIZED', explain: 'the signed timestamp is too old or too far ahead' },
  // 403
  sender_not_allowed: { code: 'FORBIDDEN', explain: 'the signature is valid but the signer (topic, service account) is not one the trigger lists' },
  verification_failed: { code: 'FORBIDDEN', explain: 'the verification token does not match' },
  // 404
  not_found: { code: 'NOT_FOUND', explain: 'no such trigger, channel or route (or it is not deployed)' },
  // 405
  method_not_allowed: { code: 'METHOD_NOT_ALLOWED', explain: 'the route does not answer this method' },
  // 408
  body_too_slow: { code: 'REQUEST_TIMEOUT', explain: 'the body arrived slower than BODY_MIN_RATE' },
  request_timeout: { code: 'REQUEST_TIMEOUT', explain: 'the headers or the whole request took longer than HEADERS_TIMEOUT_MS / REQUEST_TIMEOUT_MS' },
  // 409
  in_flight: { code: 'CONFLICT', explain: 'the first request with this idempotency key is still being processed', retryAfter: 1 },
  key_reused: { code: 'CONFLICT', explain: 'the idempotency key was used with another body' },
  // 413
  body_too_complex: { code: 'PAYLOAD_TOO_LARGE', explain: 'parsing the JSON body would take more memory than MAX_INFLIGHT_BODY_BYTES' },
  body_too_large: { code: 'PAYLOAD_TOO_LARGE', explain: 'the body is over its byte limit' },
  field_too_large: { code: 'PAYLOAD_TOO_LARGE', explain: 'a form field is over the body limit' },
  file_too_large: { code: 'PAYLOAD_TOO_LARGE', explain: 'a file is over MAX_FILE_BYTES' },
  record_too_large: { code: 'PAYLOAD_TOO_LARGE', explain: 'the event is over the largest record the sink accepts' },
  too_many_fields: { code: 'PAYLOAD_TOO_LARGE', explain: 'more fields than MAX_FIELDS' },
  too_many_files: { code: 'PAYLOAD_TOO_LARGE', explain: 'more files than MAX_FILES' },
  too_many_parts: { code: 'PAYLOAD_TOO_LARGE', explain: 'more multipart parts than MAX_FILES + MAX_FIELDS' },
  // 415
  unsupported_charset: { code: 'UNSUPPORTED_MEDIA_TYPE', explain: 'the charset cannot be decoded' },
  unsupported_media_type: { code: 'UNSUPPORTED_MEDIA_TYPE', explain: 'the content type is not one the gateway parses' },
  // 429
  auth_throttled: { code: 'RATE_LIMITED', explain: 'too many failed authentications from this client address (AUTH_FAILURE_LIMIT)', retryAfter: 'computed' },
  body_share_exceeded: { code: 'RATE_LIMITED', explain: 'this route, workspace or client address holds its share of the body budget (MAX_INFLIGHT_BODY_SHARE)', retryAfter: RETRY_AFTER_SECONDS },
  rate_limited: { code: 'RATE_LIMITED', explain: 'a trigger, channel or workspace rate limit is spent', retryAfter: 'computed' },
  // 500
  internal: { code: 'INTERNAL_ERROR', explain: 'a bug: the gateway failed in a way it did not foresee' },
  // 503
  busy: { code: 'SERVICE_UNAVAILABLE', explain: 'too many request bodies in memory, or every schema worker stayed busy for 5 s', retryAfter: RETRY_AFTER_SECONDS },
  closed: { code: 'SERVICE_UNAVAILABLE', explain: 'the gateway is shutting down', retryAfter: RETRY_AFTER_SECONDS },
  events_in_flight: { code: 'SERVICE_UNAVAILABLE', explain: 'some events of a chat delivery are being processed by another request', retryAfter: RETRY_AFTER_SECONDS },
  key_unavailable: { code: 'SERVICE_UNAVAILABLE', explain: 'an allow-listed key source did not answer in time (or KEY_FETCH=off and no key is pinned); nothing published, no quota spent', retryAfter: RETRY_AFTER_SECONDS },
  file_store_unavailable: { code: 'SERVICE_UNAVAILABLE', explain: 'the file store (S3) failed or did not answer within PUBLISH_TIMEOUT_MS; nothing was published', retryAfter: RETRY_AFTER_SECONDS },
  queue_full: { code: 'SERVICE_UNAVAILABLE', explain: 'the publish queue is full', retryAfter: RETRY_AFTER_SECONDS },
  registry_unavailable: { code: 'SERVICE_UNAVAILABLE', explain: 'the trigger/channel registry (Redis) cannot be read', retryAfter: RETRY_AFTER_SECONDS },
  secret_unreadable: { code: 'SERVICE_UNAVAILABLE', explain: 'a stored secret of the trigger or channel opens with neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS', retryAfter: RETRY_AFTER_SECONDS },
  sink_unavailable: { code: 'SERVICE_UNAVAILABLE', explain: 'the sink (Kafka or the event files) did not take the event', retryAfter: RETRY_AFTER_SECONDS },
  starting: { code: 'SERVICE_UNAVAILABLE', explain: 'the gateway has not finished starting (/readyz only)', retryAfter: 1 },
  store_unavailable: { code: 'SERVICE_UNAVAILABLE', explain: 'the idempotency store failed and IDEMPOTENCY_ON_STORE_ERROR=refuse', retryAfter: RETRY_AFTER_SECONDS },
  timeout: { code: 'SERVICE_UNAVAILABLE', explain: 'the sink did not acknowledge within PUBLISH_TIMEOUT_MS', retryAfter: RETRY_AFTER_SECONDS },
  topic_missing: { code: 'SERVICE_UNAVAILABLE', explain: 'the Kafka topic does not exist or may not be written (logged as an error, shown in /readyz)', retryAfter: RETRY_AFTER_SECONDS },
} as const satisfies Record<string, ReasonEntry>;

export type Reason = keyof typeof REASONS;

/** Outcomes of requests that were served: the `outcome` and `reason` label of a 2xx/3xx. */
export const SUCCESS_OUTCOMES = {
  accepted: 'the event is acknowledged by the sink',
  duplicate: 'a retry: the first acknowledgement is replayed, nothing is published',
  ignored: "a verified provider delivery whose kind the trigger's events globs filter out: 200, nothing published",
  ok: 'a read, a health check or a handshake',
} as const;

export type SuccessOutcome = keyof typeof SUCCESS_OUTCOMES;

/** Every request ends in exactly one outcome: the metric label and the log field. */
export type Outcome = SuccessOutcome | ErrorOutcome;
