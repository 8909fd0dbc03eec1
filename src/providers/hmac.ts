import { z } from 'zod';
import { joinKind, text } from './body';
import type { Provider, RequestHead } from './provider';
import { decode, header, hmac as mac, matchAny, refused, timestampProblem, unixSeconds, type Algorithm } from './schemes/signing';

const headerName = z.string().regex(/^[A-Za-z0-9-]{1,64}$/, 'a header name').transform((name) => name.toLowerCase());

export const hmacOptionsSchema = z
  .strictObject({
    header: headerName,
    algorithm: z.enum(['sha1', 'sha256', 'sha512']),
    encoding: z.enum(['hex', 'base64']),
    prefix: z.string().max(64).optional(),
    timestampHeader: headerName.optional(),
    signedContent: z.string().min(1).max(256).optional(),
  })
  .refine((o) => !o.signedContent || o.signedContent.split('{body}').length === 2, {
    message: 'signedContent must contain {body} exactly once',
    path: ['signedContent'],
  })
  .refine((o) => !o.signedContent?.includes('{timestamp}') || o.timestampHeader !== undefined, {
    message: 'signedContent uses {timestamp}: timestampHeader is required',
    path: ['timestampHeader'],
  })
  // Contract §10, timestamps come from signed material only: a timestamp header outside the MAC
  // can be refreshed on a captured delivery, so checking it against the tolerance proves nothing.
  .refine((o) => o.timestampHeader === undefined || o.signedContent?.includes('{timestamp}') === true, {
    message: 'timestampHeader is only checked when signed: signedContent must contain {timestamp}',
    path: ['signedContent'],
  });

type HmacOptions = z.infer<typeof hmacOptionsSchema>;

const DIGEST_BYTES: Record<Algorithm, number> = { sha1: 20, sha256: 32, sha512: 64 };

function presented(head: RequestHead): Buffer | undefined {
  const o = head.options as HmacOptions;
  const value = header(head.headers, o.header);
  const prefix = o.prefix ?? '';
  if (!value?.startsWith(prefix)) return undefined;
  const bytes = decode(value.slice(prefix.length), o.encoding);
  return bytes?.length === DIGEST_BYTES[o.algorithm] ? bytes : undefined;
}

function precheck(head: RequestHead) {
  const o = head.options as HmacOptions;
  if (!header(head.headers, o.header)) return 'signature_missing' as const;
  if (!presented(head)) return 'signature_missing' as const;
  if (!o.timestampHeader) return undefined;
  const timestamp = header(head.headers, o.timestampHeader);
  if (!timestamp) return 'signature_missing' as const;
  const seconds = unixSeconds(timestamp);
  if (seconds === undefined) return 'signature_missing' as const;
  return timestampProblem(seconds, head.nowSeconds, head.toleranceSeconds);
}

export const hmac: Provider = {
  name: 'hmac',
  title: 'Generic HMAC (any sender that signs the body with a shared secret)',
  verifies: 'options.header: [prefix]<hex|base64 HMAC-(sha1|sha256|sha512) of signedContent> where signedContent is a template over {timestamp} (options.timestampHeader, unix seconds, within toleranceSeconds both ways) and {body} (the raw bytes); default {body}',
  deliveryIdSource: 'none: idempotency.keyField (in the signed body), else the body fingerprint; an unsigned Idempotency-Key is not used',
  signsTimestamp: (options) => typeof options.timestampHeader === 'string' && typeof options.signedContent === 'string' && options.signedContent.includes('{timestamp}'),
  signatureHeaders: (options) => (typeof options.header === 'string' ? [options.header] : []),
  optionsSchema: hmacOptionsSchema as unknown as z.ZodType<Record<string, unknown>>,
  precheck,
  verify(request) {
    const problem = precheck(request);
    if (problem) return refused(problem);
    const o = request.options as HmacOptions;
    const timestamp = o.timestampHeader ? (header(request.headers, o.timestampHeader) as string) : '';
    const [before, after] = (o.signedContent ?? '{body}').split('{body}').map((part) => part.replaceAll('{timestamp}', timestamp));
    return matchAny(request.secrets, [presented(request) as Buffer], (secret) => mac(o.algorithm, secret, before, request.raw, after));
  },
  kind: (_headers, body) => joinKind(text(body, 'type') ?? text(body, 'event')),
  deliveryId: () => undefined,
};
