import { z } from 'zod';
import { ERROR_CATALOGUE } from '../outcomes/codes';
import { REASONS } from '../outcomes/reasons';
import { providerInputSchema } from '../providers/trigger-field';
import { PROVIDER_NAMES, PROVIDERS } from '../providers/registry';
import { TOPIC_STATES } from '../publish/sink';
import { CHAT_SENDERS } from '../providers/channels';
import type { ChannelRecord } from '../providers/channel-record';
import { channelInputSchema, triggerInputSchema } from '../registry/schemas';

/*
 * The schemas of the OpenAPI document. Request bodies are the very zod schemas the admin API
 * validates with; response bodies are derived from them (what a read shows instead of a
 * secret) or describe what the routes send. test/http/openapi-responses.test.ts parses real
 * answers with the response schemas, so they cannot drift from the routes unnoticed.
 */

/** The JSON value of a trigger's `response.body`; registered under its own name because it is recursive. */
export const jsonValueSchema = triggerInputSchema.shape.response.unwrap().shape.body;

const isoTime = z.iso.datetime({ offset: true });
const url = z.url();

/** `provider` as a read shows it: how many secrets are set, never a secret or a token hash. */
export const publicProviderSchema = z.strictObject({
  name: z.enum(PROVIDER_NAMES as [string, ...string[]]),
  secretsSet: z.number().int().min(0).max(2),
  publicKeys: z.array(z.string().regex(/^sha256:[0-9a-f]{64}$/)).min(1).max(2).optional().describe('the public keys as fingerprints (sha256 of the SPKI DER)'),
  events: providerInputSchema.shape.events,
  toleranceSeconds: z.number().int().min(0).describe('0: the signed timestamp is not checked (SendGrid-like schemes whose retries keep their first timestamp)'),
  options: z.record(z.string(), z.unknown()).optional().describe('the options as given, with verifyToken replaced by verifyTokenSet: true'),
});

/**
 * PENDING (contract §13, implemented on another branch): the trigger's `schema` field. Once
 * triggerInputSchema (src/registry/schemas.ts) declares it, this extension restates it (same
 * shape) and can go: use triggerInputSchema itself again.
 */
export const triggerInputDocSchema = triggerInputSchema.extend({
  schema: z
    .union([z.boolean(), z.record(z.string(), z.unknown())])
    .optional()
    .describe(
      'a JSON Schema (draft 2020-12, at most 64 KiB) that `input` must satisfy after parsing and inputFormat coercion; otherwise 400 schema_invalid with details.errors. pattern and patternProperties run in linear time (RE2 semantics) or are refused at PUT',
    ),
});

export const triggerSchema = triggerInputDocSchema.omit({ auth: true, provider: true }).extend({
  path: z.string(),
  url: url.describe('the public URL senders call (PUBLIC_BASE_URL, else the request origin)'),
  updatedAt: isoTime,
  auth: z.strictObject({ header: z.string(), tokenSet: z.literal(true) }).optional(),
  provider: publicProviderSchema.optional(),
});

const channelRead = { channelId: z.string(), url, updatedAt: isoTime };
/** A channel as a read shows it: its record without the secrets, `<name>Set: true` for each (src/registry/records.ts publicChannel). */
export function publicChannelSchema({ input, secrets }: ChannelRecord): z.ZodObject {
  const names = Object.keys(secrets);
  return input
    .omit(Object.fromEntries(names.map((name) => [name, true])) as Record<string, true>)
    .extend({ ...channelRead, ...Object.fromEntries(names.map((name) => [`${name}Set`, z.literal(true)])) });
}
const channelSchemas = CHAT_SENDERS.map(({ chat }) => ({ title: chat.api.title, input: chat.record.input, read: publicChannelSchema(chat.record) }));
export const channelSchema = z.discriminatedUnion('provider', channelSchemas.map(({ read }) => read) as [z.ZodObject, ...z.ZodObject[]]);

export const providerEntrySchema = z.strictObject({
  name: z.string(),
  title: z.string(),
  verifies: z.string(),
  handshakes: z.array(z.string()),
  deliveryId: z.string(),
  family: z.enum(['hmac-recipe', 'ed25519', 'ecdsa', 'rsa', 'jwt', 'oidc', 'x509', 'fields', 'token']),
  authenticates: z.enum(['body', 'fields', 'sender']),
  keys: z.enum(['secrets', 'publicKeys', 'secrets|publicKeys', 'none']),
  fetches: z.array(z.string()).describe('the hosts a delivery may make the gateway fetch keys from (allow-listed in code)'),
  recipe: z.record(z.string(), z.unknown()).optional().describe('the shipped recipe: copy it into a `recipe` trigger to adjust it'),
  acknowledgement: z.enum(['default', 'empty', 'twiml', 'no-content', 'deferred-interaction', 'accepted-text']),
  signedFields: z.array(z.string()).optional().describe('the fields a `fields` preset\'s signature covers (only these are authenticated)'),
  eventKinds: z.array(z.string()),
  eventKindsOpen: z.literal(true).optional().describe('the sender defines its own kinds: any glob is accepted'),
  openPrefixes: z.array(z.string()).optional().describe('kinds under these prefixes are user-defined'),
  eventKindsSources: z.array(z.string()),
});

/** `{ data: … }` of the admin API. */
export const dataOf = <T extends z.ZodType>(schema: T) => z.strictObject({ data: schema });
export const pageOf = <T extends z.ZodType>(schema: T) =>
  z.strictObject({ data: z.array(schema), nextCursor: z.string().nullable().describe('pass as `cursor` for the next page; null on the last') });
export const deletedSchema = (idName: string) => z.strictObject({ [idName]: z.string(), deleted: z.literal(true) });

export const webhookAckSchema = z.strictObject({ message: z.literal('Webhook processed'), eventId: z.uuid() });
export const webhookIgnoredSchema = z.strictObject({ message: z.literal('Webhook event ignored'), kind: z.string() });

const count = z.number().int().min(0);
export const chatAckSchema = z.strictObject({
  received: count.describe('events of the delivery addressed to this channel'),
  published: count.describe('events acknowledged by the sink in this call'),
  duplicates: count.describe('events published by an earlier delivery (or repeated within this one)'),
  foreign: count.describe('items for another phone number or account: never published'),
  invalid: count.describe('items that cannot be read: skipped and logged'),
  ignored: count.describe('items that are not chat events'),
});

/*
 * PENDING (contract §13, implemented on another branch): the delivery log and the sample check.
 * test/http/openapi-responses.test.ts should parse their real answers once they are served.
 */
export const schemaErrorSchema = z.strictObject({ instancePath: z.string(), keyword: z.string(), message: z.string() });
export const sampleValidationSchema = z.strictObject({
  valid: z.boolean(),
  errors: z.array(schemaErrorSchema).max(20).describe("the schema's complaints, up to 20; empty when valid"),
  input: z.unknown().describe('the input as it would be published'),
});
const signatureDiagnosticsSchema = z
  .strictObject({
    scheme: z.string().describe('the signature scheme the provider uses'),
    headerSeen: z.string().nullable().describe('the signature header found on the request, null when none was'),
    signaturesInHeader: z.number().int().min(0),
    encodingLooksLike: z.enum(['hex', 'base64', 'other']),
    timestamp: z.number().int().optional().describe('the signed timestamp, when the scheme has one'),
    skewSeconds: z.number().optional(),
    toleranceSeconds: z.number().int().optional(),
    secretsTried: z.number().int().min(0),
    bodySha256: z
      .string()
      .nullable()
      .describe("hex SHA-256 of the body as received, to compare with the provider's dashboard; null when refused on its headers, before the body was read"),
    bodyBytes: z.number().int().min(0),
  })
  .describe('why a signed delivery was refused, with nothing a forger could use: never a secret, never the expected signature');
export const deliveryLogEntrySchema = z.strictObject({
  at: isoTime,
  requestId: z.string(),
  status: z.number().int(),
  outcome: z.string().describe('the outcome label of igw_http_requests_total'),
  reason: z.string().optional().describe('details.reason of a refusal'),
  eventId: z.string().optional(),
  idempotencyKey: z.string().optional(),
  deliveryId: z.string().optional().describe("the provider's delivery id"),
  kind: z.string().optional().describe("the provider's event kind"),
  bytes: count.describe('body bytes received'),
  ms: z.number().min(0),
  clientIp: z.string(),
  diagnostics: z
    .union([signatureDiagnosticsSchema, z.strictObject({ errors: z.array(schemaErrorSchema) }).describe('a refused schema: its errors')])
    .optional(),
});

export const healthSchema = z.strictObject({ status: z.literal('ok') });

/*
 * /readyz (src/routes/health.ts, src/observability/dependencies.ts): the shared dependencies
 * are reported, never a reason for a 503. The same body is the `details` of the 503 (with
 * `reason` and `status: draining | starting`).
 */
const dependencyState = z.enum(['up', 'down']).describe('down: why in details.<name>.error');
const sinkState = z
  .enum(['up', 'down', 'topic_missing'])
  .describe('down: why in details.sink.error; topic_missing: a configured Kafka topic does not exist or may not be written (details.sink.topics)');
const dependencyDown = z.strictObject({ error: z.string().describe('why the check failed (no answer within 1 s, not connected, …)') });
export const readySchema = z.strictObject({
  status: z.literal('ready'),
  checks: z
    .strictObject({
      redis: dependencyState.optional().describe('with REDIS_URL or REDIS_CLUSTER_NODES'),
      sink: sinkState,
      'triggers-file': dependencyState.optional().describe('with TRIGGERS_FILE: down until the file is applied'),
      s3: dependencyState.optional().describe('with S3_BUCKET: the file store of files by reference'),
    })
    .describe('the shared dependencies: the same for every pod, so reported here and in igw_dependency_up, not by a 503'),
  details: z
    .strictObject({
      redis: dependencyDown
        .extend({
          unreachableSlots: z
            .string()
            .optional()
            .describe('Redis Cluster: the slots whose master does not answer (writes to them fail), as ranges: `0-5460,10923-16383`'),
        })
        .optional(),
      sink: z
        .strictObject({
          kind: z.enum(['kafka', 'file']).optional(),
          topics: z
            .record(z.string(), z.enum(TOPIC_STATES))
            .optional()
            .describe('Kafka: each configured topic and what the sink knows of it (igw_sink_topic)'),
          error: z.string().optional(),
        })
        .optional(),
      'triggers-file': dependencyDown.optional(),
      s3: dependencyDown.optional(),
    })
    .optional()
    .describe('what the checks know: why one is down, the sink and its topics'),
});

const reasonNames = Object.keys(REASONS) as [keyof typeof REASONS, ...(keyof typeof REASONS)[]];

/** The contract's error body (§7); `details.reason` is one of src/outcomes/reasons.ts. */
export const errorSchema = z.strictObject({
  error: z.strictObject({
    code: z.enum(Object.keys(ERROR_CATALOGUE) as [keyof typeof ERROR_CATALOGUE, ...(keyof typeof ERROR_CATALOGUE)[]]),
    message: z.string(),
    details: z
      .union([
        z.looseObject({ reason: z.enum(reasonNames) }).describe('why, and what else the sender needs (a limit, retryAfter, the field)'),
        z.array(z.looseObject({ code: z.string(), path: z.string(), message: z.string() })).describe('schema issues (invalid_schema)'),
      ])
      .optional(),
  }),
});

/** Options of the presets that take some, by preset name. */
export const providerOptionSchemas = Object.fromEntries(
  PROVIDERS.filter((provider) => provider.optionsSchema).map((provider) => [provider.name, provider.optionsSchema!]),
);

/** Components by name: request bodies as the admin API reads them, everything else as the gateway writes it. */
export const inputComponents = {
  TriggerInput: triggerInputDocSchema,
  ChannelInput: channelInputSchema,
  ...Object.fromEntries(channelSchemas.map(({ title, input }) => [`${title}ChannelInput`, input])),
  ProviderInput: providerInputSchema,
  JsonValue: jsonValueSchema,
  ...Object.fromEntries(Object.entries(providerOptionSchemas).map(([name, schema]) => [`${pascal(name)}ProviderOptions`, schema])),
} as const satisfies Record<string, z.ZodType>;

export const outputComponents = {
  Trigger: triggerSchema,
  Channel: channelSchema,
  ...Object.fromEntries(channelSchemas.map(({ title, read }) => [`${title}Channel`, read])),
  PublicProvider: publicProviderSchema,
  ProviderCatalogueEntry: providerEntrySchema,
  WebhookAck: webhookAckSchema,
  WebhookIgnored: webhookIgnoredSchema,
  ChatAck: chatAckSchema,
  DeliveryLogEntry: deliveryLogEntrySchema,
  SampleValidation: sampleValidationSchema,
  SchemaError: schemaErrorSchema,
  Health: healthSchema,
  Ready: readySchema,
  Error: errorSchema,
  JsonValue: jsonValueSchema,
} as const satisfies Record<string, z.ZodType>;

export function pascal(name: string): string {
  return name.replace(/(^|[-_])([a-z0-9])/g, (_m, _sep, c: string) => c.toUpperCase());
}
