import { CHANNEL_ID_PATTERN, PATH_PATTERN } from '../registry/schemas';
import type { JsonSchema } from './components';
import type { Operation } from './document';
import { headers } from './responses';

/**
 * Contract §13's admin operations: a trigger's sample checked against its schema, and the
 * delivery logs. Kept apart from document.ts, whose helpers it mirrors.
 */
const ADMIN = [{ adminToken: [] }];
const json = (schema: JsonSchema) => ({ 'application/json': { schema } });
const ok = (description: string, schema: JsonSchema) => ({ description, headers: headers([]), content: json(schema) });
const idParameter = (name: string, pattern: RegExp) => ({ name, in: 'path', required: true, schema: { type: 'string', pattern: pattern.source } });

const violation = {
  type: 'object',
  required: ['instancePath', 'keyword', 'message'],
  properties: { instancePath: { type: 'string' }, keyword: { type: 'string' }, message: { type: 'string' } },
};

const entry = {
  type: 'object',
  required: ['at', 'requestId', 'status', 'outcome', 'bytes', 'ms', 'clientIp'],
  properties: {
    at: { type: 'string', format: 'date-time' },
    requestId: { type: 'string' },
    status: { type: 'integer' },
    outcome: { type: 'string' },
    reason: { type: 'string' },
    eventId: { type: 'string' },
    idempotencyKey: { type: 'string' },
    deliveryId: { type: 'string' },
    kind: { type: 'string' },
    bytes: { type: 'integer' },
    ms: { type: 'number' },
    clientIp: { type: 'string' },
    diagnostics: {
      type: 'object',
      description: 'a refused signed delivery: scheme, headerSeen, signaturesInHeader, encodingLooksLike, timestamp?, skewSeconds?, toleranceSeconds?, secretsTried, bodySha256?, bodyBytes; a refused schema: errors',
    },
  },
};

const page = {
  type: 'object',
  required: ['data', 'nextCursor'],
  properties: { data: { type: 'array', items: entry }, nextCursor: { type: ['string', 'null'] } },
  additionalProperties: false,
};

const pageParameters = [
  { name: 'limit', in: 'query', required: false, description: 'page size', schema: { type: 'integer', minimum: 1, maximum: 500, default: 50 } },
  { name: 'cursor', in: 'query', required: false, description: 'nextCursor of the previous page', schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,256}$' } },
];

export function deliveryLogPaths(operation: (op: Operation) => JsonSchema): Record<string, JsonSchema> {
  const deliveries = (operationId: string, what: string, name: string, pattern: RegExp) => ({
    parameters: [idParameter(name, pattern)],
    get: operation({
      operationId,
      tags: ['admin'],
      summary: `The delivery log of a ${what}: its last DELIVERY_LOG_MAX requests (at most 7 days), newest first`,
      security: ADMIN,
      parameters: pageParameters,
      responses: { '200': ok('The page', page) },
    }),
  });
  return {
    '/admin/triggers/{path}/validate': {
      parameters: [idParameter('path', PATH_PATTERN)],
      post: operation({
        operationId: 'validateTriggerSample',
        tags: ['admin'],
        summary: "A sample body, sent as a sender would send it (any content type), read and checked against the trigger's schema; nothing is published, charged or claimed",
        security: ADMIN,
        requestBody: { required: true, content: { '*/*': { schema: {} } } },
        responses: {
          '200': ok('Whether the sample satisfies the schema, and its input as the event would carry it', {
            type: 'object',
            required: ['data'],
            properties: {
              data: {
                type: 'object',
                required: ['valid', 'errors', 'input'],
                properties: { valid: { type: 'boolean' }, errors: { type: 'array', maxItems: 20, items: violation }, input: {} },
              },
            },
          }),
        },
      }),
    },
    '/admin/triggers/{path}/deliveries': deliveries('listTriggerDeliveries', 'trigger', 'path', PATH_PATTERN),
    '/admin/channels/{channelId}/deliveries': deliveries('listChannelDeliveries', 'channel', 'channelId', CHANNEL_ID_PATTERN),
  };
}
