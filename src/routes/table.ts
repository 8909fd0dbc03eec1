import type { Reason } from '../outcomes/reasons';
import { CHAT_SENDERS } from '../providers/channels';
import { ref, type JsonSchema } from '../openapi/components';
import {
  data,
  handshakes,
  headerParameter,
  json,
  ok,
  page,
  PAGE_PARAMETERS,
  queryParameter,
  RATE_LIMIT_HEADERS,
  SENDER_BODY,
  TRACE_PARAMETERS,
  type Listener,
} from '../openapi/parts';
import type { HeaderName } from '../openapi/responses';
import { channelRouteSpecs } from './channel-table';
import { ADMIN_AUTH, ADMIN_WRITE, BODY, GATE, JSON_MEMORY, NOT_STORED, PARSE, READ, SIGNATURE, SLOW_CLIENT } from './route-reasons';

/*
 * THE route table: every route either listener serves, with what the OpenAPI document
 * (src/routes/openapi-document.ts) says of it. The document is generated from this list alone, and
 * test/unit/route-table.test.ts checks that the routes createApp and createAdminApp serve are
 * exactly these (method, path, listener): a route added to a router and not here, or here and
 * not served, fails it.
 */

/**
 * How a route authenticates its caller (components.securitySchemes of the document):
 * `triggerTokenOrProvider` is the trigger's token, its provider's signature, or nothing when
 * the trigger has neither; a channel's route names its module's scheme (`chat.api.security`).
 */
export type Security = 'none' | 'adminToken' | 'triggerTokenOrProvider' | ChannelScheme;
/** A channel's security scheme, as its module names it. */
export type ChannelScheme = string & {};

export interface RouteSpec {
  method: 'get' | 'post' | 'put' | 'delete';
  /** With `{name}` for a path parameter (src/openapi/parts.ts PATH_PARAMETERS); express writes `:name`. */
  path: string;
  listeners: Listener[];
  operationId: string;
  tag: 'ingress' | 'admin' | 'operations';
  summary: string;
  description?: string;
  security: Security;
  /** Query and header parameters; path parameters come from the path. */
  parameters?: JsonSchema[];
  requestBody?: JsonSchema;
  /** The 2xx answers; the errors come from `reasons`. */
  responses: Record<string, JsonSchema>;
  /** The reasons it can answer with, besides EVERY_OPERATION's (`internal`, `duplicate_host`). */
  reasons: Reason[];
  /** Headers every error answer of this route may carry. */
  errorHeaders?: HeaderName[];
}

const ingress: RouteSpec[] = [
  {
    method: 'post',
    path: '/api/webhooks/trigger/{path}',
    listeners: ['public'],
    operationId: 'triggerWebhook',
    tag: 'ingress',
    summary: "A trigger's webhook: authenticate, parse, dedupe, rate-limit, publish, then acknowledge",
    description: [
      'A 2xx means the event is in Kafka (or fsync\'d in embedded mode); anything else means "send it again", and the duplicate that follows is dropped.',
      "Authentication: the trigger's `auth.token` as a bearer token, or in the trigger's own `auth.header` when it names one; a trigger with `provider` verifies that provider's signature instead (or as well).",
      'Any method but POST and GET answers 405 with `Allow: POST`.',
      '',
      'Handshakes answered on POST without publishing anything:',
      handshakes('POST'),
    ].join('\n'),
    security: 'triggerTokenOrProvider',
    parameters: [
      headerParameter('Idempotency-Key', "the idempotency key (else a provider delivery id, the trigger's keyField, or a fingerprint of the body)", {
        type: 'string',
        maxLength: 255,
      }),
      ...TRACE_PARAMETERS,
    ],
    requestBody: {
      required: false,
      description: "An empty body is `{}`. Form and multipart fields are coerced to the types the trigger's inputFormat declares; file parts become data URLs.",
      content: SENDER_BODY,
    },
    responses: {
      '2XX': ok(
        "Published and acknowledged (the trigger's `response` status and body when it has one; a retry gets the first acknowledgement again with `Idempotent-Replayed: true`), a provider delivery filtered out by the trigger's `events` (200, nothing published), or a handshake's answer. Slack deliveries are answered with an empty body, Twilio ones with empty TwiML.",
        {
          'application/json': { schema: { anyOf: [ref('WebhookAck'), ref('WebhookIgnored'), ref('JsonValue')] } },
          'text/xml': { schema: { type: 'string', const: '<Response></Response>' } },
          'text/plain': { schema: { type: 'string' } },
        },
        ['X-Event-Id', 'Idempotent-Replayed', ...RATE_LIMIT_HEADERS],
      ),
    },
    reasons: [
      'not_found', 'credentials_invalid', ...GATE, ...SIGNATURE, 'timestamp_out_of_tolerance', 'timestamp_missing', 'invalid_handshake',
      'key_url_not_allowed', 'sender_not_allowed', 'key_unavailable',
      ...BODY, ...JSON_MEMORY, ...PARSE, 'file_value_not_allowed', 'key_too_long', 'kind_too_long', 'schema_invalid', 'in_flight', 'key_reused', 'record_too_large', 'rate_limited', ...NOT_STORED, 'file_store_unavailable',
    ],
    errorHeaders: RATE_LIMIT_HEADERS,
  },
  {
    method: 'get',
    path: '/api/webhooks/trigger/{path}',
    listeners: ['public'],
    operationId: 'answerTriggerHandshake',
    tag: 'ingress',
    summary: "The GET verification handshake of the trigger's provider",
    description: [
      'Only these providers answer a GET; on any other trigger (or an unknown path) a GET is 405 with `Allow: POST`:',
      handshakes('GET'),
    ].join('\n'),
    // The handshake proves the URL to the provider; what it checks (a verify token) is a query parameter.
    security: 'none',
    parameters: [
      queryParameter('hub.mode', 'meta: `subscribe`'),
      queryParameter('hub.verify_token', "meta: the trigger's options.verifyToken"),
      queryParameter('hub.challenge', 'meta: echoed'),
      queryParameter('challenge', 'dropbox: echoed'),
      queryParameter('crc_token', 'x: answered with its HMAC'),
    ],
    responses: {
      '200': ok('The challenge answered', { 'text/plain': { schema: { type: 'string' } }, ...json({ type: 'object', properties: { response_token: { type: 'string' } } }) }),
    },
    reasons: ['method_not_allowed', ...GATE, 'invalid_handshake', 'verification_failed', ...READ],
  },
  ...CHAT_SENDERS.flatMap(channelRouteSpecs),
];

interface Resource {
  base: string;
  idName: string;
  one: string;
  many: string;
  input: string;
  output: string;
}

/** PUT (upsert), GET, DELETE one; GET a page (src/routes/admin.ts resource()). */
function resource({ base, idName, one, many, input, output }: Resource): RouteSpec[] {
  const item = `${base}/{${idName}}`;
  const common = { listeners: ['admin'] as Listener[], tag: 'admin' as const, security: 'adminToken' as const };
  const noun = one.toLowerCase();
  return [
    {
      ...common,
      method: 'get',
      path: base,
      operationId: `list${many}`,
      summary: `A page of ${many.toLowerCase()}`,
      parameters: PAGE_PARAMETERS,
      responses: { '200': ok('The page', page(ref(output))) },
      reasons: [...ADMIN_AUTH, 'invalid_parameter', ...READ],
    },
    {
      ...common,
      method: 'put',
      path: item,
      operationId: `put${one}`,
      summary: `Create or replace a ${noun}; in force on every pod within 1 s`,
      description: 'A key the schema does not declare is a 400 with a detail `{ code: "unrecognized_keys", keys }`. Secrets are never returned.',
      requestBody: { required: true, content: json(ref(input)) },
      responses: { '200': ok(`The ${noun} as stored, without its secrets`, data(ref(output))) },
      reasons: ADMIN_WRITE,
    },
    {
      ...common,
      method: 'get',
      path: item,
      operationId: `get${one}`,
      summary: `One ${noun}, without its secrets`,
      responses: { '200': ok(`The ${noun}`, data(ref(output))) },
      reasons: [...ADMIN_AUTH, 'invalid_parameter', ...READ],
    },
    {
      ...common,
      method: 'delete',
      path: item,
      operationId: `delete${one}`,
      summary: `Remove a ${noun}`,
      responses: {
        '200': ok(
          'Deleted',
          data({ type: 'object', required: [idName, 'deleted'], properties: { [idName]: { type: 'string' }, deleted: { const: true } }, additionalProperties: false }),
        ),
      },
      reasons: [...ADMIN_AUTH, 'invalid_parameter', 'registry_unavailable'],
    },
    {
      ...common,
      method: 'get',
      path: `${item}/deliveries`,
      operationId: `list${one}Deliveries`,
      summary: `The ${noun}'s delivery log, newest first (contract §13)`,
      description:
        'Every request to it leaves an entry: the last DELIVERY_LOG_MAX (default 100), at most 7 days, shared by every pod. Never a secret, an expected signature or a body.',
      parameters: PAGE_PARAMETERS,
      responses: { '200': ok('A page of entries', page(ref('DeliveryLogEntry'))) },
      reasons: [...ADMIN_AUTH, 'invalid_parameter', ...READ],
    },
  ];
}

const admin: RouteSpec[] = [
  ...resource({ base: '/admin/triggers', idName: 'path', one: 'Trigger', many: 'Triggers', input: 'TriggerInput', output: 'Trigger' }),
  {
    method: 'post',
    path: '/admin/triggers/{path}/validate',
    listeners: ['admin'],
    operationId: 'validateTriggerSample',
    tag: 'admin',
    summary: "Check a sample body against the trigger's parsing, inputFormat and schema, without publishing (contract §13)",
    description:
      'The body is a sample exactly as a sender would send it, with the same content type. Nothing is published, charged or claimed; `input` is what would be published.',
    security: 'adminToken',
    requestBody: { required: false, content: SENDER_BODY },
    responses: { '200': ok('The verdict', data(ref('SampleValidation'))) },
    reasons: [...ADMIN_AUTH, 'invalid_parameter', ...READ, ...BODY, ...JSON_MEMORY, ...PARSE],
  },
  ...resource({ base: '/admin/channels', idName: 'channelId', one: 'Channel', many: 'Channels', input: 'ChannelInput', output: 'Channel' }),
  {
    method: 'get',
    path: '/admin/providers',
    listeners: ['admin'],
    operationId: 'listProviders',
    tag: 'admin',
    summary: 'The provider presets: what each verifies, its handshake, its delivery id, its documented event kinds',
    security: 'adminToken',
    responses: { '200': ok('Every preset', data({ type: 'array', items: ref('ProviderCatalogueEntry') })) },
    reasons: ADMIN_AUTH,
  },
  {
    method: 'get',
    path: '/admin/providers/{name}',
    listeners: ['admin'],
    operationId: 'getProvider',
    tag: 'admin',
    summary: 'One provider preset',
    security: 'adminToken',
    responses: { '200': ok('The preset', data(ref('ProviderCatalogueEntry'))) },
    reasons: ADMIN_AUTH,
  },
];

const operations: RouteSpec[] = [
  {
    method: 'get',
    path: '/healthz',
    listeners: ['public', 'admin'],
    operationId: 'health',
    tag: 'operations',
    summary: 'The process is alive (public and admin listener)',
    security: 'none',
    responses: { '200': ok('Alive', json(ref('Health'))) },
    reasons: SLOW_CLIENT,
  },
  {
    method: 'get',
    path: '/readyz',
    listeners: ['admin'],
    operationId: 'ready',
    tag: 'operations',
    summary: 'This process can take traffic: started and not draining',
    description: [
      'Only this process decides: 200 once it has started, 503 `starting` before that and `closed` from SIGTERM on (its `details` hold the same report as the 200 body, with `status: starting | draining`).',
      'Redis, the sink and the triggers file are shared by every pod: they are reported in `checks` (and in `igw_dependency_up`, `igw_sink_topic`), never by a 503 that would take every pod out of the Service at once.',
    ].join('\n'),
    security: 'none',
    responses: { '200': ok('Ready', json(ref('Ready'))) },
    reasons: ['closed', 'starting', ...SLOW_CLIENT],
  },
  {
    method: 'get',
    path: '/metrics',
    listeners: ['admin'],
    operationId: 'metrics',
    tag: 'operations',
    summary: 'Prometheus metrics (the README lists them)',
    security: 'none',
    responses: { '200': ok('Prometheus text exposition format', { 'text/plain; version=0.0.4; charset=utf-8': { schema: { type: 'string' } } }) },
    reasons: SLOW_CLIENT,
  },
  {
    method: 'get',
    path: '/openapi.json',
    listeners: ['admin'],
    operationId: 'openapi',
    tag: 'operations',
    summary: 'This document',
    security: 'none',
    responses: { '200': ok('OpenAPI 3.1', json({ type: 'object' })) },
    reasons: SLOW_CLIENT,
  },
];

export const ROUTES: readonly RouteSpec[] = [...ingress, ...admin, ...operations];

/** The reasons each route can answer with (besides EVERY_OPERATION's: `internal`, `duplicate_host`), by operationId. */
export const OPERATION_REASONS: Record<string, Reason[]> = Object.fromEntries(ROUTES.map((route) => [route.operationId, route.reasons]));
