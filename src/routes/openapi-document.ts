import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHAT_SENDERS } from '../providers/channels';
import { schemaComponents, type JsonSchema } from '../openapi/components';
import { LISTENERS, PATH_PARAMETERS } from '../openapi/parts';
import { errorResponses, HEADERS } from '../openapi/responses';
import { ROUTES, type RouteSpec, type Security } from './table';

export { LISTENERS, type Listener } from '../openapi/parts';
export { OPERATION_REASONS } from './table';

/*
 * The OpenAPI 3.1 description of the gateway, generated from the route table
 * (src/routes/table.ts): the ingress routes (public listener) and the admin API, health and
 * metrics (admin listener). `npm run openapi` writes it to docs/openapi.json; GET /openapi.json
 * serves it. Request and response schemas come from src/openapi/schemas.ts (the zod schemas
 * that validate requests); error responses from the reason catalogue (src/outcomes/reasons.ts).
 */

const SECURITY: Record<'none' | 'adminToken' | 'triggerTokenOrProvider', Array<Record<string, string[]>>> = {
  none: [],
  adminToken: [{ adminToken: [] }],
  triggerTokenOrProvider: [{}, { triggerToken: [] }],
};

/** A fixed requirement, or the channel scheme of that name. */
function securityOf(security: Security): Array<Record<string, string[]>> {
  return Object.hasOwn(SECURITY, security) ? SECURITY[security as keyof typeof SECURITY] : [{ [security]: [] }];
}

const SECURITY_SCHEMES = {
  adminToken: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN' },
  triggerToken: {
    type: 'http',
    scheme: 'bearer',
    description: "the trigger's auth.token (a trigger whose auth names a header takes the bare token in that header instead)",
  },
  // Each channel's, as its module names it.
  ...Object.fromEntries(
    CHAT_SENDERS.map(({ chat: { api } }) => [
      api.security.scheme,
      { type: 'apiKey', in: 'header', name: headerCase(api.security.header), description: api.security.description },
    ]),
  ),
};

/** `x-hub-signature-256` → `X-Hub-Signature-256`, as senders' docs write header names. */
function headerCase(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_match, dash: string, letter: string) => dash + letter.toUpperCase());
}

/** The path parameters a path holds, in order: `/admin/triggers/{path}` → [path]. */
function pathParameters(path: string): JsonSchema[] {
  return [...path.matchAll(/\{([A-Za-z]+)\}/g)].map(([, name]) => {
    const parameter = PATH_PARAMETERS[name];
    if (!parameter) throw new Error(`route table: no description of the path parameter {${name}} (src/openapi/parts.ts)`);
    return parameter;
  });
}

/** The error answers the operations share (components.responses), filled as the paths are built. */
type SharedResponses = Record<string, JsonSchema>;

function operation(route: RouteSpec, shared: SharedResponses): JsonSchema {
  const { operationId, tag, summary, description, security, parameters, requestBody, responses, reasons, errorHeaders = [] } = route;
  return {
    operationId,
    summary,
    ...(description && { description }),
    tags: [tag],
    security: securityOf(security),
    ...(parameters && { parameters }),
    ...(requestBody && { requestBody }),
    responses: { ...responses, ...errorResponses(reasons, errorHeaders, shared) },
  };
}

function paths(shared: SharedResponses): Record<string, JsonSchema> {
  const items: Record<string, JsonSchema> = {};
  for (const route of ROUTES) {
    const servers = route.listeners.map((listener) => LISTENERS[listener]);
    const item = (items[route.path] ??= { servers, ...(pathParameters(route.path).length > 0 && { parameters: pathParameters(route.path) }) });
    if (JSON.stringify(item.servers) !== JSON.stringify(servers)) throw new Error(`route table: ${route.path} is on different listeners per method`);
    if (item[route.method]) throw new Error(`route table: ${route.method.toUpperCase()} ${route.path} twice`);
    item[route.method] = operation(route, shared);
  }
  return items;
}

function packageVersion(): string {
  // src/routes and dist/routes are both two levels below the package root.
  const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

export function openApiDocument(): JsonSchema {
  const responses: SharedResponses = {};
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
    paths: paths(responses),
    components: {
      schemas: schemaComponents(),
      responses: Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b))),
      headers: HEADERS,
      securitySchemes: SECURITY_SCHEMES,
    },
  };
}

/** The document as docs/openapi.json holds it: two-space indent, a final newline. */
export function openApiDocumentText(): string {
  return `${JSON.stringify(openApiDocument(), null, 2)}\n`;
}
