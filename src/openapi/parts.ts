import { PROVIDERS } from '../providers/registry';
import { CHANNEL_ID_PATTERN, PATH_PATTERN } from '../registry/schemas';
import type { JsonSchema } from './components';
import { headers, type HeaderName } from './responses';

/*
 * The pieces the route table (src/routes/table.ts) describes its routes with: listeners,
 * parameters, content and answers, in OpenAPI 3.1 terms.
 */

/**
 * The two listeners. Every path item names the one(s) serving it in its `servers`; a client
 * generated from the document calls each operation on the right port.
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

export const RATE_LIMIT_HEADERS: HeaderName[] = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];

export const json = (schema: JsonSchema) => ({ 'application/json': { schema } });

/** A 2xx answer: its description, its content, the headers it carries besides X-Request-Id. */
export function ok(description: string, content?: JsonSchema, extraHeaders: HeaderName[] = []): JsonSchema {
  return { description, headers: headers(extraHeaders), ...(content && { content }) };
}

/** `{ data: … }` of the admin API. */
export const data = (schema: JsonSchema) => json({ type: 'object', required: ['data'], properties: { data: schema }, additionalProperties: false });

/** `{ data: [...], nextCursor }`: a page of the admin API. */
export const page = (items: JsonSchema) =>
  json({
    type: 'object',
    required: ['data', 'nextCursor'],
    properties: { data: { type: 'array', items }, nextCursor: { type: ['string', 'null'] } },
    additionalProperties: false,
  });

export function headerParameter(name: string, description: string, schema: JsonSchema, required = false): JsonSchema {
  return { name, in: 'header', required, description, schema };
}

export function queryParameter(name: string, description: string, schema: JsonSchema = { type: 'string' }): JsonSchema {
  return { name, in: 'query', required: false, description, schema };
}

export const PAGE_PARAMETERS = [
  queryParameter('limit', 'page size', { type: 'integer', minimum: 1, maximum: 500, default: 50 }),
  queryParameter('cursor', 'nextCursor of the previous page', { type: 'string', pattern: '^[A-Za-z0-9_-]{1,256}$' }),
];

export const TRACE_PARAMETERS = [
  headerParameter(
    'traceparent',
    'W3C Trace Context. The published events continue this trace (CloudEvents `traceparent` attribute and Kafka header); absent or invalid, a new trace is started.',
    { type: 'string', pattern: '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}(-.*)?$' },
  ),
  headerParameter('tracestate', 'W3C Trace Context vendor data, passed on with a valid traceparent', { type: 'string', maxLength: 512 }),
];

/** Every `{name}` a route path holds, described once. */
export const PATH_PARAMETERS: Record<string, JsonSchema> = {
  path: { name: 'path', in: 'path', required: true, description: 'the trigger path', schema: { type: 'string', pattern: PATH_PATTERN.source } },
  channelId: {
    name: 'channelId',
    in: 'path',
    required: true,
    description: 'the channel id',
    schema: { type: 'string', pattern: CHANNEL_ID_PATTERN.source },
  },
  name: { name: 'name', in: 'path', required: true, description: 'the preset name', schema: { type: 'string', enum: PROVIDERS.map((p) => p.name) } },
};

/** A body as a sender sends it to a trigger (and as /validate takes a sample). */
export const SENDER_BODY = {
  'application/json': { schema: { $ref: '#/components/schemas/JsonValue' } },
  'application/x-www-form-urlencoded': { schema: { type: 'object', additionalProperties: { type: 'string' } } },
  'multipart/form-data': { schema: { type: 'object', additionalProperties: {} } },
  'text/plain': { schema: { type: 'string' } },
};

/** The handshakes the presets answer on this method, as a markdown list. */
export function handshakes(method: 'GET' | 'POST'): string {
  return PROVIDERS.filter((p) => p.handshake?.method === method)
    .map((p) => `- \`${p.name}\`: ${p.handshake!.describe}`)
    .join('\n');
}
