import type { IncomingHttpHeaders } from 'node:http';
import { joinKind, text } from './body';
import type { Provider, RequestHead } from './provider';
import { verify } from 'node:crypto';
import { MAX_PUBLIC_KEY_SIGNATURES } from './recipe/engine';
import { publicKeyOf } from './recipe/public-keys';
import { fromBase64, header, hmac, matchAny, refused, timestampProblem, unixSeconds } from './schemes/signing';

const MAX_ENTRIES = 32;
const MAX_SIGNATURES = 8;

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

/** The versions this trigger can check: v1 (HMAC) with secrets, v1a (Ed25519, the spec's asymmetric version) with publicKeys. */
function versions(head: RequestHead): string[] {
  return [...(head.secrets.length > 0 ? ['v1'] : []), ...((head.publicKeys?.length ?? 0) > 0 ? ['v1a'] : [])];
}

function precheck(head: RequestHead) {
  const { id, timestamp, signature } = signedHeaders(head.headers);
  if (!id || !timestamp || !signature) return 'signature_missing' as const;
  const seconds = unixSeconds(timestamp);
  const usable = versions(head).some((version) => signaturesOf(signature, version).length > 0);
  if (seconds === undefined || !usable) return 'signature_missing' as const;
  return timestampProblem(seconds, head.nowSeconds, head.toleranceSeconds);
}

/** Space-separated `<version>,<base64>` entries of one version; other versions (`v1a`, `v2`) are skipped, not fatal. */
function signaturesOf(value: string, version: string): Buffer[] {
  const found: Buffer[] = [];
  for (const entry of value.split(' ', MAX_ENTRIES)) {
    const comma = entry.indexOf(',');
    if (comma < 0 || entry.slice(0, comma) !== version) continue;
    const bytes = fromBase64(entry.slice(comma + 1));
    if (bytes && found.length < MAX_SIGNATURES) found.push(bytes);
  }
  return found;
}

/** v1a: Ed25519 over the same content, each signature against each pinned key (`whpk_` + base64); at most two looked at (src/providers/recipe/engine.ts). */
function v1aMatches(publicKeys: readonly string[], signatures: readonly Buffer[], content: Buffer): boolean {
  let matched = false;
  for (const text of publicKeys) {
    const key = publicKeyOf('ed25519', text);
    if (!key) continue;
    for (const signature of signatures.filter((bytes) => bytes.length === 64).slice(0, MAX_PUBLIC_KEY_SIGNATURES)) {
      if (verify(null, content, key, signature)) matched = true;
    }
  }
  return matched;
}

export const standardWebhooks: Provider = {
  name: 'standard-webhooks',
  title: 'Standard Webhooks (Svix and every sender following the spec)',
  verifies: 'webhook-signature (or svix-signature): space-separated v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{raw body}">, key = base64-decoded secret after whsec_; or, with publicKeys (whpk_ + base64), v1a,<base64 Ed25519 signature> of the same; webhook-timestamp within toleranceSeconds both ways',
  deliveryIdSource: 'header svix-id, else webhook-id: the id the verified signature covers',
  deliveryIdFrom: 'signed',
  signsTimestamp: true,
  signatureHeaders: () => ['webhook-signature', 'svix-signature'],
  secretProblem: (secret) => (standardWebhooksKey(secret) ? undefined : 'a Standard Webhooks secret is whsec_ followed by base64'),
  keys: () => ({ secrets: true, publicKeys: 'ed25519' }),
  precheck,
  verify(request) {
    const problem = precheck(request);
    if (problem) return refused(problem);
    const { id, timestamp, signature } = signedHeaders(request.headers) as Record<string, string>;
    const publicKeys = request.publicKeys ?? [];
    if (publicKeys.length > 0 && v1aMatches(publicKeys, signaturesOf(signature, 'v1a'), Buffer.concat([Buffer.from(`${id}.${timestamp}.`), request.raw]))) {
      return { ok: true, secret: '' };
    }
    return matchAny(request.secrets, signaturesOf(signature, 'v1'), (secret) =>
      hmac('sha256', standardWebhooksKey(secret) ?? Buffer.alloc(0), `${id}.${timestamp}.`, request.raw),
    );
  },
  kind: (_headers, body) => joinKind(text(body, 'type')),
  // The id the signature covers: a `webhook-id` beside a verified `svix-id` is not it.
  deliveryId: (headers) => signedHeaders(headers).id,
};
