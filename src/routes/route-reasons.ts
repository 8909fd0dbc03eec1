import type { Reason } from '../outcomes/reasons';

/*
 * The reasons the routes of src/routes/table.ts can answer with, by the step that refuses them.
 * Each route's list (besides `internal`) becomes its documented error responses.
 */

/** Why a request that wanted to publish was not acknowledged: each is a 503 with Retry-After. */
export const NOT_STORED: Reason[] = [
  'busy', 'closed', 'queue_full', 'registry_unavailable', 'secret_unreadable', 'sink_unavailable', 'store_unavailable', 'timeout',
  'topic_missing',
];
/** A registry read: Redis down, or a stored secret no key opens. */
export const READ: Reason[] = ['registry_unavailable', 'secret_unreadable'];
export const SIGNATURE: Reason[] = ['signature_missing', 'signature_invalid'];
/**
 * Reading a body through the ingress gate (src/ingress/gate.ts): its byte limit, the
 * fair share of the body budget (429) or the whole budget (503), the minimum transfer rate and
 * REQUEST_TIMEOUT_MS (408).
 */
export const BODY: Reason[] = ['body_unreadable', 'body_too_large', 'body_share_exceeded', 'busy', 'body_too_slow', 'request_timeout'];
/** Parsing a JSON body: the memory it would take beyond the body's own bytes. */
export const JSON_MEMORY: Reason[] = ['body_too_complex', 'body_share_exceeded', 'busy'];
/** The ingress gate: a client address that failed authentication too often is refused before its credentials are looked at. */
export const GATE: Reason[] = ['auth_throttled'];
/** Parsing a sender's body as a trigger does: its content type, fields, parts and files. */
export const PARSE: Reason[] = [
  'invalid_encoding', 'invalid_field', 'invalid_json', 'invalid_multipart', 'field_too_large', 'file_too_large', 'too_many_fields',
  'too_many_files', 'too_many_parts', 'unsupported_charset', 'unsupported_media_type',
];
export const CHAT_POST: Reason[] = [
  'not_found', ...GATE, ...SIGNATURE, ...BODY, 'invalid_encoding', 'invalid_json', 'invalid_schema',
  'record_too_large', 'rate_limited', ...NOT_STORED, 'events_in_flight',
];
/** Every admin call: the admin token, checked through the ingress gate (429 auth_throttled). */
export const ADMIN_AUTH: Reason[] = ['credentials_invalid', 'not_found', ...GATE];
/** An admin write: its JSON body (1 MB), which must arrive within REQUEST_TIMEOUT_MS; a trigger's schema must compile within its budget. */
export const ADMIN_WRITE: Reason[] = [
  ...ADMIN_AUTH, 'invalid_parameter', 'invalid_schema', 'schema_too_complex', 'invalid_json', 'body_unreadable', 'body_too_large', 'unsupported_charset',
  'request_timeout', 'registry_unavailable',
];
/** Either listener: headers that do not arrive within HEADERS_TIMEOUT_MS, a request not complete within REQUEST_TIMEOUT_MS. */
export const SLOW_CLIENT: Reason[] = ['request_timeout'];
