import type { IncomingHttpHeaders } from 'node:http';
import { joinKind, text } from './body';
import type { Provider, RequestHead } from './provider';
import { fromBase64, header, hmac, matchAny, refused, timestampProblem, unixSeconds } from './schemes/signing';

const SECRET_PREFIX = 'whsec_';

/**
 * Each of the three headers as Svix's SDK reads them: `svix-*` where present, else the spec's
 * `webhook-*` (Svix's `Webhook.verify` maps them so, then verifies as the spec's SDK does). A
 * sender following the spec alone sends `webhook-*` only, and is read as its SDK reads it.
 */
function signedHeaders(headers: IncomingHttpHeaders) {
  const either = (name: string) => header(headers, `svix-${name}`) ?? header(headers, `webhook-${name}`);
  return { id: either('id'), timestamp: either('timestamp'), signature: either('signature') };
}

/** The key is the base64-decoded part after `whsec_` (unlike Stripe, which uses the whole string). */
export function standardWebhooksKey(secret: string): Buffer | undefined {
  const key = fromBase64(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret);
  return key && key.length > 0 ? key : undefined;
}

function precheck(head: RequestHead) {
  const { id, timestamp, signature } = signedHeaders(head.headers);
  if (!id || !timestamp || !signature) return 'signature_missing' as const;
  const seconds = unixSeconds(timestamp);
  if (seconds === undefined || v1Signatures(signature).length === 0) return 'signature_missing' as const;
  return timestampProblem(seconds, head.nowSeconds, head.toleranceSeconds);
}

/** Space-separated `v1,<base64>` entries; other versions (`v1a`, `v2`) are skipped, not fatal. */
function v1Signatures(value: string): Buffer[] {
  const found: Buffer[] = [];
  for (const entry of value.split(' ')) {
    const comma = entry.indexOf(',');
    if (comma < 0 || entry.slice(0, comma) !== 'v1') continue;
    const bytes = fromBase64(entry.slice(comma + 1));
    if (bytes) found.push(bytes);
  }
  return found;
}

export const standardWebhooks: Provider = {
  name: 'standard-webhooks',
  title: 'Standard Webhooks (Svix and every sender following the spec)',
  verifies: 'webhook-signature (or svix-signature): space-separated v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{raw body}">, key = base64-decoded secret after whsec_; webhook-timestamp within toleranceSeconds both ways',
  deliveryIdSource: 'header svix-id, else webhook-id: the id the verified signature covers',
  deliveryIdFrom: 'signed',
  signsTimestamp: true,
  signatureHeaders: () => ['webhook-signature', 'svix-signature'],
  secretProblem: (secret) => (standardWebhooksKey(secret) ? undefined : 'a Standard Webhooks secret is whsec_ followed by base64'),
  precheck,
  verify(request) {
    const problem = precheck(request);
    if (problem) return refused(problem);
    const { id, timestamp, signature } = signedHeaders(request.headers) as Record<string, string>;
    return matchAny(request.secrets, v1Signatures(signature), (secret) =>
      hmac('sha256', standardWebhooksKey(secret) ?? Buffer.alloc(0), `${id}.${timestamp}.`, request.raw),
    );
  },
  kind: (_headers, body) => joinKind(text(body, 'type')),
  // The id the signature covers: a `webhook-id` beside a verified `svix-id` is not it.
  deliveryId: (headers) => signedHeaders(headers).id,
};
