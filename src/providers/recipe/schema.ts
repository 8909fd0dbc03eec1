import { z } from 'zod';
import { PUBLIC_KEY_ALGORITHMS } from './public-keys';

/**
 * The declarative signature recipe (contract §10.1 C): which headers carry what, the bytes
 * signed, the primitive and the key's form; where the delivery id and the event kind are.
 * Every rule the contract lists is checked here, so a recipe that reaches the engine is whole.
 */

const headerName = z.string().regex(/^[A-Za-z0-9-]{1,64}$/, 'a header name: letters, digits and dashes').transform((name) => name.toLowerCase());
/** RFC 6901, bounded: a few segments of a JSON body. */
const pointer = z.string().max(256).regex(/^(?:\/[^/]{0,64}){1,8}$/, 'a JSON pointer such as /data/id (1-8 segments)');
const versionKey = z.string().regex(/^[A-Za-z0-9_.-]{1,16}$/, '1-16 of A-Z a-z 0-9 _ . -');

export const HMAC_ALGORITHMS = ['hmac-sha1', 'hmac-sha256', 'hmac-sha512'] as const;
export const ALGORITHMS = [...HMAC_ALGORITHMS, ...PUBLIC_KEY_ALGORITHMS] as const;
export type RecipeAlgorithm = (typeof ALGORITHMS)[number];

const signature = z
  .strictObject({
    header: headerName.optional(),
    headers: z.array(headerName).min(1).max(4).optional(),
    format: z.enum(['raw', 'list', 'kv']).default('raw'),
    listSeparator: z.enum([' ', ',']).optional(),
    pairSeparator: z.enum([',', ';']).optional(),
    timestampKey: versionKey.optional(),
    signatureKeys: z.array(versionKey).min(1).max(4).optional(),
    prefix: z.string().max(16).optional(),
    encoding: z.enum(['hex', 'base64', 'base64url']),
  })
  .superRefine((s, ctx) => {
    if ((s.header === undefined) === (s.headers === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'exactly one of header or headers', path: ['header'] });
    }
    if (s.format === 'kv' && !s.signatureKeys) ctx.addIssue({ code: 'custom', message: 'a kv format needs signatureKeys', path: ['signatureKeys'] });
    if (s.format !== 'kv' && s.timestampKey !== undefined) ctx.addIssue({ code: 'custom', message: 'timestampKey is for the kv format', path: ['timestampKey'] });
    if (s.format !== 'kv' && s.pairSeparator !== undefined) ctx.addIssue({ code: 'custom', message: 'pairSeparator is for the kv format', path: ['pairSeparator'] });
    if (s.format !== 'list' && s.listSeparator !== undefined) ctx.addIssue({ code: 'custom', message: 'listSeparator is for the list format', path: ['listSeparator'] });
    if (s.format === 'raw' && s.signatureKeys !== undefined) ctx.addIssue({ code: 'custom', message: 'signatureKeys is for the list and kv formats', path: ['signatureKeys'] });
  });

const source = z.union([z.strictObject({ header: headerName }), z.strictObject({ body: pointer })]);
/** Several items of an array body (HubSpot, SendGrid): each item's value at the pointer. */
const eachSource = z.strictObject({ each: pointer });
/** The hex SHA-256 of the verified body, after a prefix (Discord events: `discord:`). */
const digestSource = z.strictObject({ bodyDigest: z.strictObject({ prefix: z.string().max(32) }) });
const deliveryIdSource = z.union([source, eachSource, digestSource]);

/** A header source used only when its value is one of `values` (Twitch's `revocation` message type). */
const whenHeader = z.strictObject({ header: headerName, values: z.array(z.string().min(1).max(64)).min(1).max(8) });
const kindPart = z.union([source, z.strictObject({ constant: z.string().min(1).max(128) })]);
const kindSource = z.union([
  source,
  whenHeader,
  eachSource,
  z.strictObject({ constant: z.string().min(1).max(128) }),
  z.strictObject({ join: z.array(kindPart).min(1).max(4), separator: z.string().max(4).default('.') }),
]);

const PLACEHOLDER = /\{([a-z]+)(?::([A-Za-z0-9-]{1,64}))?\}/g;
const PLACEHOLDERS = new Set(['body', 'timestamp', 'id', 'method', 'url', 'header']);

export const recipeSchema = z
  .strictObject({
    signature,
    timestamp: z
      .strictObject({
        header: headerName.optional(),
        unit: z.enum(['s', 'ms', 'rfc3339']),
        /** The provider keeps the first timestamp on retries (SendGrid): no tolerance unless the trigger sets one. */
        retriesKeepTimestamp: z.boolean().optional(),
      })
      .optional(),
    id: z.strictObject({ header: headerName }).optional(),
    algorithm: z.enum(ALGORITHMS),
    key: z.strictObject({ encoding: z.enum(['utf8', 'base64', 'hex']), stripPrefix: z.string().min(1).max(16).optional() }).optional(),
    signedContent: z.string().min(1).max(256).default('{body}'),
    requireHeaders: z.record(headerName, z.string().min(1).max(128)).optional(),
    deliveryId: z.union([deliveryIdSource, z.array(deliveryIdSource).min(1).max(4)]).optional(),
    kind: z.union([kindSource, z.array(kindSource).min(1).max(4)]).optional(),
  })
  .superRefine((r, ctx) => {
    const issue = (message: string, ...path: (string | number)[]) => ctx.addIssue({ code: 'custom', message, path });
    const seen = new Map<string, number>();
    for (const match of r.signedContent.matchAll(PLACEHOLDER)) {
      const [, name, argument] = match;
      if (!PLACEHOLDERS.has(name) || (name === 'header') !== (argument !== undefined)) {
        issue(`unknown placeholder ${match[0]}; known: {body} {timestamp} {id} {method} {url} {header:NAME}`, 'signedContent');
        continue;
      }
      seen.set(match[0].toLowerCase(), (seen.get(match[0].toLowerCase()) ?? 0) + 1);
    }
    for (const [placeholder, count] of seen) if (count > 1) issue(`${placeholder} appears more than once`, 'signedContent');
    if (!seen.has('{body}')) issue('signedContent must contain {body}', 'signedContent');
    const timestampSource = r.timestamp?.header !== undefined || r.signature.timestampKey !== undefined;
    if (seen.has('{timestamp}')) {
      if (!r.timestamp) issue('signedContent uses {timestamp}: timestamp { header?, unit } is required', 'timestamp');
      else if (!timestampSource) issue('a timestamp needs a source: timestamp.header or signature.timestampKey', 'timestamp', 'header');
      if (r.timestamp?.header !== undefined && r.signature.timestampKey !== undefined) issue('one timestamp source: timestamp.header or signature.timestampKey', 'timestamp', 'header');
    } else if (r.timestamp || r.signature.timestampKey !== undefined) {
      // Contract §10: a timestamp outside the MAC can be refreshed on a captured delivery; checking it proves nothing.
      issue('a timestamp source is only checked when signed: signedContent must contain {timestamp}', 'signedContent');
    }
    if (seen.has('{id}') !== (r.id !== undefined)) issue('id { header } and {id} in signedContent go together', seen.has('{id}') ? 'id' : 'signedContent');
    const publicKey = (PUBLIC_KEY_ALGORITHMS as readonly string[]).includes(r.algorithm);
    if (publicKey && r.key) issue('key decoding is for shared secrets; a public-key algorithm takes publicKeys', 'key');
  });

export type Recipe = z.output<typeof recipeSchema>;
export type RecipeInput = z.input<typeof recipeSchema>;

/** Whether the recipe signs `{url}` (it then needs PUBLIC_BASE_URL, contract §10.1 C). */
export function signsUrl(recipe: Recipe): boolean {
  return recipe.signedContent.includes('{url}');
}

export function signatureHeadersOf(recipe: Recipe): string[] {
  return recipe.signature.headers ?? (recipe.signature.header ? [recipe.signature.header] : []);
}
