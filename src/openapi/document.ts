import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Reason } from '../http/reasons';
import { PROVIDERS } from '../providers/registry';
import { CHANNEL_ID_PATTERN, PATH_PATTERN } from '../registry/schemas';
import { ref, schemaComponents, type JsonSchema } from './components';
import { errorResponses, HEADERS, headers, type HeaderName } from './responses';

/*
 * The OpenAPI 3.1 description of the gateway: the ingress routes (public listener) and the
 * admin API, health and metrics (admin listener). `npm run openapi` writes it to
 * docs/openapi.json; GET /openapi.json serves it. Request and response schemas come from
 * src/openapi/schemas.ts (the zod schemas that validate requests); error responses from the
 * reason catalogue (src/http/reasons.ts).
 */

const RATE_LIMIT_HEADERS: HeaderName[] = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];

/** Why a request that wanted to publish was not acknowledged: each is a 503 with Retry-After. */
const NOT_STORED: Reason[] = [
  'busy', 'closed', 'queue_full', 'registry_unavailable', 'secret_unreadable', 'sink_unavailable', 'store_unavailable', 'timeout',
  'topic_missing',
];
/** A registry read: Redis down, or a stored secret no key opens. */
const READ: Reason[] = ['registry_unavailable', 'secret_unreadable'];
const SIGNATURE: Reason[] = ['signature_missing', 'signature_invalid'];
/**
 * Reading a body through the ingress gate (src/routes/ingress-gate.ts): its byte limit, the
 * fair share of the body budget (429) or the whole budget (503), the minimum transfer rate and
 * REQUEST_TIMEOUT_MS (408).
 */
const BODY: Reason[] = ['body_unreadable', 'body_too_large', 'body_share_exceeded', 'busy', 'body_too_slow', 'request_timeout'];
/** Parsing a JSON body: the memory it would take beyond the body's own bytes. */
const JSON_MEMORY: Reason[] = ['body_too_complex', 'body_share_exceeded', 'busy'];
/** The ingress gate: a client address that failed authentication too often is refused before its credentials are looked at. */
const GATE: Reason[] = ['auth_throttled'];
const CHAT_POST: Reason[] = [
  'not_found', ...GATE, ...SIGNATURE, ...BODY, 'invalid_encoding', 'invalid_json', 'invalid_schema',
  'record_too_large', 'rate_limited', ...NOT_STORED, 'events_in_flight',
];
/** Every admin call: the admin token, checked through the ingress gate (429 auth_throttled). */
const ADMIN_AUTH: Reason[] = ['credentials_invalid', 'not_found', ...GATE];
/** An admin write: its JSON body (1 MB), which must arrive within REQUEST_TIMEOUT_MS. */
const ADMIN_WRITE: Reason[] = [
  ...ADMIN_AUTH, 'invalid_parameter', 'invalid_schema', 'invalid_json', 'body_unreadable', 'body_too_large', 'unsupported_charset',
  'request_timeout', 'registry_unavailable',
];

/** The reasons each operation can answer with (besides EVERY_OPERATION's: `internal`, `duplicate_host`). */
export const OPERATION_REASONS: Record<string, Reason[]> = {
  triggerWebhook: [
    'not_found', 'credentials_invalid', ...GATE, ...SIGNATURE, 'timestamp_out_of_tolerance', 'invalid_handshake',
    ...BODY, ...JSON_MEMORY, 'invalid_encoding', 'invalid_field', 'invalid_json', 'invalid_multipart', 'key_too_long',
    'file_value_not_allowed',
    'in_flight', 'key_reused',
    'field_too_large', 'file_too_large', 'record_too_large', 'too_many_fields', 'too_many_files', 'too_many_parts',
    'unsupported_charset', 'unsupported_media_type', 'rate_limited', ...NOT_STORED, 'file_store_unavailable',
  ],
  answerTriggerHandshake: ['method_not_allowed', 'invalid_handshake', 'verification_failed', ...READ],
  verifyWhatsAppSubscription: ['not_found', ...GATE, 'invalid_handshake', 'verification_failed', 'rate_limited', ...READ],
  receiveWhatsApp: [...CHAT_POST, ...JSON_MEMORY],
  receiveTwilio: [...CHAT_POST, 'too_many_fields', 'unsupported_media_type'],
  receiveTelegram: [...CHAT_POST, ...JSON_MEMORY],
  ready: ['closed', 'starting'],
  health: [],
  metrics: [],
  openapi: [],
  listTriggers: [...ADMIN_AUTH, 'invalid_parameter', ...READ],
  putTrigger: ADMIN_WRITE,
  getTrigger: [...ADMIN_AUTH, 'invalid_parameter', ...READ],
  deleteTrigger: [...ADMIN_AUTH, 'invalid_parameter', 'registry_unavailable'],
  listChannels: [...ADMIN_AUTH, 'invalid_parameter', ...READ],
  putChannel: ADMIN_WRITE,
  getChannel: [...ADMIN_AUTH, 'invalid_parameter', ...READ],
  deleteChannel: [...ADMIN_AUTH, 'invalid_parameter', 'registry_unavailable'],
  listProviders: ADMIN_AUTH,
  getProvider: ADMIN_AUTH,
};

/**
 * The two listeners. Every path item names the one(s) serving it in its `servers`; a client
 * generated from this document calls each operation on the right port.
 */
const serverVariables = (port: string, setting: string, portDefault: string) => ({
  host: { default: 'localhost', description: "the gateway's host name" },
  [port]: { default: portDefault, description: setting },
});
export const LISTENERS = {
  public: {
    url: 'http://{host}:{port}',
    description: 'the public listener (PORT): the ingress routes and /healthz, for the senders',
    variables: serverVariables('port', 'PORT', '8080'),
  },
  admin: {
    url: 'http://{host}:{adminPort}',
    description: 'the admin listener (ADMIN_PORT): /admin, /openapi.json, /metrics, /readyz and /healthz; keep it inside the cluster',
    variables: serverVariables('adminPort', 'ADMIN_PORT', '8081'),
  },
} as const;
export type Listener = keyof typeof LISTENERS;

function on(listeners: Listener[], paths: Record<string, JsonSchema>): Record<string, JsonSchema> {
  const servers = listeners.map((listener) => LISTENERS[listener]);
  return Object.fromEntries(Object.entries(paths).map(([path, item]) => [path, { servers, ...item }]));
}

const json = (schema: JsonSchema) => ({ 'application/json': { schema } });

function pathParameter(name: string, pattern: RegExp, description: string): JsonSchema {
  return { name, in: 'path', required: true, description, schema: { type: 'string', pattern: pattern.source } };
}

function headerParameter(name: string, description: string, schema: JsonSchema, required = false): JsonSchema {
  return { name, in: 'header', required, description, schema };
}

function queryParameter(name: string, description: string, schema: JsonSchema = { type: 'string' }): JsonSchema {
  return { name, in: 'query', required: false, description, schema };
}

const TRACE_PARAMETERS = [
  headerParameter(
    'traceparent',
    'W3C Trace Context. The published events continue this trace (CloudEvents `traceparent` attribute and Kafka header); absent or invalid, a new trace is started.',
    { type: 'string', pattern: '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}(-.*)?$' },
  ),
  headerParameter('tracestate', 'W3C Trace Context vendor data, passed on with a valid traceparent', { type: 'string', maxLength: 512 }),
];

const ADMIN = [{ adminToken: [] }];

interface Operation {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  security?: Array<Record<string, string[]>>;
  parameters?: JsonSchema[];
  requestBody?: JsonSchema;
  /** The 2xx (and 3xx) answers; errors are added from OPERATION_REASONS. */
  responses: Record<string, JsonSchema>;
  /** Headers every error answer of this operation may carry. */
  errorHeaders?: HeaderName[];
}

/** The error answers the operations share (components.responses), filled as the paths are built. */
type SharedResponses = Record<string, JsonSchema>;

function operationWith(shared: SharedResponses) {
  return ({ errorHeaders = [], ...op }: Operation): JsonSchema => ({
    ...op,
    responses: { ...op.responses, ...errorResponses(OPERATION_REASONS[op.operationId], errorHeaders, shared) },
  });
}

function ok(description: string, content?: JsonSchema, extraHeaders: HeaderName[] = []): JsonSchema {
  return { description, headers: headers(extraHeaders), ...(content && { content }) };
}

function handshakes(method: 'GET' | 'POST'): string {
  return PROVIDERS.filter((p) => p.handshake?.method === method)
    .map((p) => `- \`${p.name}\`: ${p.handshake!.describe}`)
    .join('\n');
}

function webhookPaths(operation: (op: Operation) => JsonSchema): Record<string, JsonSchema> {
  const path = pathParameter('path', PATH_PATTERN, 'the trigger path');
  return {
    '/api/webhooks/trigger/{path}': {
      parameters: [path],
      post: operation({
        operationId: 'triggerWebhook',
        tags: ['ingress'],
        summary: "A trigger's webhook: authenticate, parse, dedupe, rate-limit, publish, then acknowledge",
        description: [
          'A 2xx means the event is in Kafka (or fsync\'d in embedded mode); anything else means "send it again", and the duplicate that follows is dropped.',
          "Authentication: the trigger's `auth.token` as a bearer token, or in the trigger's own `auth.header` when it names one; a trigger with `provider` verifies that provider's signature instead (or as well).",
          'Any method but POST and GET answers 405 with `Allow: POST`.',
          '',
          'Handshakes answered on POST without publishing anything:',
          handshakes('POST'),
        ].join('\n'),
        security: [{}, { triggerToken: [] }],
        parameters: [
          headerParameter('Idempotency-Key', 'the idempotency key (else a provider delivery id, the trigger\'s keyField, or a fingerprint of the body)', {
            type: 'string',
            maxLength: 255,
          }),
          ...TRACE_PARAMETERS,
        ],
        requestBody: {
          required: false,
          description: 'An empty body is `{}`. Form and multipart fields are coerced to the types the trigger\'s inputFormat declares; file parts become data URLs.',
          content: {
            'application/json': { schema: ref('JsonValue') },
            'application/x-www-form-urlencoded': { schema: { type: 'object', additionalProperties: { type: 'string' } } },
            'multipart/form-data': { schema: { type: 'object', additionalProperties: {} } },
            'text/plain': { schema: { type: 'string' } },
          },
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
        errorHeaders: RATE_LIMIT_HEADERS,
      }),
      get: operation({
        operationId: 'answerTriggerHandshake',
        tags: ['ingress'],
        summary: "The GET verification handshake of the trigger's provider",
        description: [
          'Only these providers answer a GET; on any other trigger (or an unknown path) a GET is 405 with `Allow: POST`:',
          handshakes('GET'),
        ].join('\n'),
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
      }),
    },
  };
}

function channelPaths(operation: (op: Operation) => JsonSchema): Record<string, JsonSchema> {
  const channelId = pathParameter('channelId', CHANNEL_ID_PATTERN, 'the channel id');
  const chatAnswer = 'Every event of the delivery is acknowledged by the sink (or was already). A 503 names how many are missing; the retry publishes only those.';
  return {
    '/api/channels/whatsapp/{channelId}': {
      parameters: [channelId],
      get: operation({
        operationId: 'verifyWhatsAppSubscription',
        tags: ['ingress'],
        summary: "Meta's subscription handshake for a WhatsApp channel",
        parameters: [
          queryParameter('hub.mode', '`subscribe`', { type: 'string', const: 'subscribe' }),
          queryParameter('hub.verify_token', "the channel's verifyToken"),
          queryParameter('hub.challenge', 'echoed when the token matches; 1-256 of [A-Za-z0-9_.-]', { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,256}$' }),
        ],
        responses: { '200': ok('The challenge', { 'text/plain': { schema: { type: 'string' } } }, RATE_LIMIT_HEADERS) },
        errorHeaders: RATE_LIMIT_HEADERS,
      }),
      post: operation({
        operationId: 'receiveWhatsApp',
        tags: ['ingress'],
        summary: 'A WhatsApp Cloud API webhook delivery: every message and status becomes a chat event',
        parameters: [
          headerParameter('X-Hub-Signature-256', "sha256=<hex HMAC-SHA256 of the raw body, key = the channel's appSecret>", { type: 'string' }, true),
          ...TRACE_PARAMETERS,
        ],
        requestBody: { required: true, content: json({ type: 'object', description: 'the WhatsApp Business Account webhook payload', required: ['entry'] }) },
        responses: { '200': ok(chatAnswer, json(ref('ChatAck')), RATE_LIMIT_HEADERS) },
        errorHeaders: RATE_LIMIT_HEADERS,
      }),
    },
    '/api/channels/twilio/{channelId}': {
      parameters: [channelId],
      post: operation({
        operationId: 'receiveTwilio',
        tags: ['ingress'],
        summary: 'A Twilio Messaging webhook or status callback (SMS and WhatsApp)',
        description: 'Other methods: 405. The signed URL is PUBLIC_BASE_URL (else the request origin) + path + query.',
        parameters: [
          headerParameter('X-Twilio-Signature', "base64 HMAC-SHA1 with the channel's authToken over the URL and the sorted POST parameters", { type: 'string' }, true),
          ...TRACE_PARAMETERS,
        ],
        requestBody: {
          required: true,
          content: {
            'application/x-www-form-urlencoded': { schema: { type: 'object', additionalProperties: { type: 'string' } } },
            'application/json': { schema: { type: 'object', description: 'the JSON variant, signed through bodySHA256 in the URL' } },
          },
        },
        responses: { '200': ok(chatAnswer, { 'text/xml': { schema: { type: 'string', const: '<Response></Response>' } } }, RATE_LIMIT_HEADERS) },
        errorHeaders: RATE_LIMIT_HEADERS,
      }),
    },
    '/api/channels/telegram/{channelId}': {
      parameters: [channelId],
      post: operation({
        operationId: 'receiveTelegram',
        tags: ['ingress'],
        summary: 'A Telegram Bot API update',
        description: 'Other methods: 405.',
        parameters: [
          headerParameter('X-Telegram-Bot-Api-Secret-Token', "the channel's secretToken", { type: 'string' }, true),
          ...TRACE_PARAMETERS,
        ],
        requestBody: { required: true, content: json({ type: 'object', description: 'a Telegram Update', required: ['update_id'] }) },
        responses: { '200': ok(chatAnswer, json(ref('ChatAck')), RATE_LIMIT_HEADERS) },
        errorHeaders: RATE_LIMIT_HEADERS,
      }),
    },
  };
}

function operationsPaths(operation: (op: Operation) => JsonSchema): Record<string, JsonSchema> {
  return {
    ...on(['public', 'admin'], {
      '/healthz': {
        get: operation({ operationId: 'health', tags: ['operations'], summary: 'The process is alive (public and admin listener)', responses: { '200': ok('Alive', json(ref('Health'))) } }),
      },
    }),
    ...on(['admin'], adminOperationsPaths(operation)),
  };
}

function adminOperationsPaths(operation: (op: Operation) => JsonSchema): Record<string, JsonSchema> {
  return {
    '/readyz': {
      get: operation({
        operationId: 'ready',
        tags: ['operations'],
        summary: 'This process can take traffic: started and not draining',
        description: [
          'Only this process decides: 200 once it has started, 503 `starting` before that and `closed` from SIGTERM on (its `details` hold the same report as the 200 body, with `status: starting | draining`).',
          'Redis, the sink and the triggers file are shared by every pod: they are reported in `checks` (and in `igw_dependency_up`, `igw_sink_topic`), never by a 503 that would take every pod out of the Service at once.',
        ].join('\n'),
        responses: { '200': ok('Ready', json(ref('Ready'))) },
      }),
    },
    '/metrics': {
      get: operation({
        operationId: 'metrics',
        tags: ['operations'],
        summary: 'Prometheus metrics (the README lists them)',
        responses: { '200': ok('Prometheus text exposition format', { 'text/plain; version=0.0.4; charset=utf-8': { schema: { type: 'string' } } }) },
      }),
    },
    '/openapi.json': {
      get: operation({
        operationId: 'openapi',
        tags: ['operations'],
        summary: 'This document',
        responses: { '200': ok('OpenAPI 3.1', json({ type: 'object' })) },
      }),
    },
  };
}

interface Resource {
  base: string;
  idName: string;
  idPattern: RegExp;
  one: string;
  many: string;
  input: string;
  output: string;
}

function resourcePaths(operation: (op: Operation) => JsonSchema, { base, idName, idPattern, one, many, input, output }: Resource): Record<string, JsonSchema> {
  const id = pathParameter(idName, idPattern, `the ${one.toLowerCase()}'s ${idName}`);
  const data = (schema: JsonSchema) => json({ type: 'object', required: ['data'], properties: { data: schema }, additionalProperties: false });
  return {
    [base]: {
      get: operation({
        operationId: `list${many}`,
        tags: ['admin'],
        summary: `A page of ${many.toLowerCase()}`,
        security: ADMIN,
        parameters: [
          queryParameter('limit', 'page size', { type: 'integer', minimum: 1, maximum: 500, default: 50 }),
          queryParameter('cursor', 'nextCursor of the previous page', { type: 'string', pattern: '^[A-Za-z0-9_-]{1,256}$' }),
        ],
        responses: {
          '200': ok(
            'The page',
            json({
              type: 'object',
              required: ['data', 'nextCursor'],
              properties: { data: { type: 'array', items: ref(output) }, nextCursor: { type: ['string', 'null'] } },
              additionalProperties: false,
            }),
          ),
        },
      }),
    },
    [`${base}/{${idName}}`]: {
      parameters: [id],
      put: operation({
        operationId: `put${one}`,
        tags: ['admin'],
        summary: `Create or replace a ${one.toLowerCase()}; in force on every pod within 1 s`,
        description: 'A key the schema does not declare is a 400 with a detail `{ code: "unrecognized_keys", keys }`. Secrets are never returned.',
        security: ADMIN,
        requestBody: { required: true, content: json(ref(input)) },
        responses: { '200': ok(`The ${one.toLowerCase()} as stored, without its secrets`, data(ref(output))) },
      }),
      get: operation({
        operationId: `get${one}`,
        tags: ['admin'],
        summary: `One ${one.toLowerCase()}, without its secrets`,
        security: ADMIN,
        responses: { '200': ok(`The ${one.toLowerCase()}`, data(ref(output))) },
      }),
      delete: operation({
        operationId: `delete${one}`,
        tags: ['admin'],
        summary: `Remove a ${one.toLowerCase()}`,
        security: ADMIN,
        responses: {
          '200': ok(
            'Deleted',
            data({ type: 'object', required: [idName, 'deleted'], properties: { [idName]: { type: 'string' }, deleted: { const: true } }, additionalProperties: false }),
          ),
        },
      }),
    },
  };
}

function adminPaths(operation: (op: Operation) => JsonSchema): Record<string, JsonSchema> {
  const data = (schema: JsonSchema) => json({ type: 'object', required: ['data'], properties: { data: schema }, additionalProperties: false });
  return {
    ...resourcePaths(operation, { base: '/admin/triggers', idName: 'path', idPattern: PATH_PATTERN, one: 'Trigger', many: 'Triggers', input: 'TriggerInput', output: 'Trigger' }),
    ...resourcePaths(operation, { base: '/admin/channels', idName: 'channelId', idPattern: CHANNEL_ID_PATTERN, one: 'Channel', many: 'Channels', input: 'ChannelInput', output: 'Channel' }),
    '/admin/providers': {
      get: operation({
        operationId: 'listProviders',
        tags: ['admin'],
        summary: 'The provider presets: what each verifies, its handshake, its delivery id, its documented event kinds',
        security: ADMIN,
        responses: { '200': ok('Every preset', data({ type: 'array', items: ref('ProviderCatalogueEntry') })) },
      }),
    },
    '/admin/providers/{name}': {
      parameters: [{ name: 'name', in: 'path', required: true, schema: { type: 'string', enum: PROVIDERS.map((p) => p.name) } }],
      get: operation({
        operationId: 'getProvider',
        tags: ['admin'],
        summary: 'One provider preset',
        security: ADMIN,
        responses: { '200': ok('The preset', data(ref('ProviderCatalogueEntry'))) },
      }),
    },
  };
}

function packageVersion(): string {
  // src/openapi and dist/openapi are both two levels below the package root.
  const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

export function openApiDocument(): JsonSchema {
  const responses: SharedResponses = {};
  const operation = operationWith(responses);
  const paths = {
    ...on(['public'], { ...webhookPaths(operation), ...channelPaths(operation) }),
    ...on(['admin'], adminPaths(operation)),
    ...operationsPaths(operation),
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Ingress gateway',
      version: packageVersion(),
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      description: [
        'Webhook and chat ingress: third-party systems POST to public webhook URLs and phone-messaging channels call back; the gateway authenticates, parses, dedupes, rate-limits and publishes CloudEvents to Kafka.',
        '',
        'The public listener (`PORT`) serves the `ingress` routes and `/healthz`; the admin listener (`ADMIN_PORT`) serves `/admin`, `/openapi.json`, `/metrics`, `/readyz` and `/healthz`. Each path names its listener in `servers`; on the other listener it is a 404.',
        'Either listener answers 408 `request_timeout` to a request whose headers do not arrive within `HEADERS_TIMEOUT_MS`, or that is not complete within `REQUEST_TIMEOUT_MS`.',
        'Every error body is `{ "error": { "code", "message", "details"? } }` with `details.reason` from the reason catalogue, and every response carries `X-Request-Id`.',
      ].join('\n'),
    },
    servers: [LISTENERS.public, LISTENERS.admin],
    tags: [
      { name: 'ingress', description: 'Webhook triggers and phone-messaging channels (public listener)' },
      { name: 'admin', description: 'The trigger and channel registry and the provider catalogue (bearer ADMIN_TOKEN; 404 when ADMIN_TOKEN is unset)' },
      { name: 'operations', description: 'Health, readiness, metrics and this document' },
    ],
    paths,
    components: {
      schemas: schemaComponents(),
      responses: Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b))),
      headers: HEADERS,
      securitySchemes: {
        adminToken: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN' },
        triggerToken: {
          type: 'http',
          scheme: 'bearer',
          description: "the trigger's auth.token (a trigger whose auth names a header takes the bare token in that header instead)",
        },
      },
    },
  };
}

/** The document as docs/openapi.json holds it: two-space indent, a final newline. */
export function openApiDocumentText(): string {
  return `${JSON.stringify(openApiDocument(), null, 2)}\n`;
}
