import type { Recipe } from './schema';
import { signatureHeadersOf } from './schema';

const ALGORITHM_NAMES: Record<Recipe['algorithm'], string> = {
  'hmac-sha1': 'HMAC-SHA1',
  'hmac-sha256': 'HMAC-SHA256',
  'hmac-sha512': 'HMAC-SHA512',
  ed25519: 'Ed25519 signature',
  'ecdsa-p256-sha256': 'ECDSA P-256 SHA-256 signature',
  'rsa-pkcs1-sha256': 'RSA PKCS#1 v1.5 SHA-256 signature',
};

/** One line for the catalogue's `verifies`, written from the recipe itself. */
export function describeVerifies(recipe: Recipe): string {
  const s = recipe.signature;
  const where = signatureHeadersOf(recipe).join(' or ');
  const format = s.format === 'kv' ? ` (${s.timestampKey ? `${s.timestampKey}=<timestamp>${s.pairSeparator ?? ','}` : ''}${s.signatureKeys?.join('|')}=<sig>)` : s.format === 'list' ? ` (a list of ${s.signatureKeys ? `${s.signatureKeys.join('|')},<sig>` : 'signatures'})` : '';
  const timestamp = recipe.timestamp ? `; the timestamp (${recipe.timestamp.header ?? `the ${s.timestampKey} pair`}, ${recipe.timestamp.unit}) within toleranceSeconds${recipe.timestamp.retriesKeepTimestamp ? ' when the trigger sets one' : ' both ways'}` : '';
  const required = recipe.requireHeaders ? `; requires ${Object.entries(recipe.requireHeaders).map(([name, value]) => `${name}: ${value}`).join(', ')}` : '';
  const key = recipe.key ? `; key = the secret ${recipe.key.stripPrefix ? `after ${recipe.key.stripPrefix}, ` : ''}${recipe.key.encoding}-decoded` : '';
  return `${where}${format}: ${s.prefix ? `${s.prefix}` : ''}<${s.encoding} ${ALGORITHM_NAMES[recipe.algorithm]} of "${recipe.signedContent}">${timestamp}${required}${key}`;
}

/** One line for the catalogue's `deliveryId`. */
export function describeDeliveryId(recipe: Recipe): string {
  const sources = recipe.deliveryId === undefined ? [] : Array.isArray(recipe.deliveryId) ? recipe.deliveryId : [recipe.deliveryId];
  if (sources.length === 0) return 'none: the body claim (same body and kind within the window is a duplicate)';
  const named = sources.map((source) => {
    if ('header' in source) return `header ${source.header}${source.header === recipe.id?.header ? ' (signed)' : ' (unsigned: backed by the body claim)'}`;
    if ('body' in source) return `body ${source.body}`;
    if ('each' in source) return `body items' ${source.each} (several: one id hashed from all)`;
    return `${source.bodyDigest.prefix}<sha256 hex of the body>`;
  });
  return named.join(', else ');
}
