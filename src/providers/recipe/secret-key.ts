import { fromBase64, fromHex } from '../schemes/signing';
import type { Recipe } from './schema';

/**
 * A shared secret as key bytes (contract §10.1 C `key`): as written (utf8, the default), or
 * decoded from base64 (Teams, Standard Webhooks after `whsec_`) or hex (Adyen banking).
 * Undefined when it does not decode.
 */
export function secretKey(secret: string, key: Recipe['key']): Buffer | undefined {
  if (!key) return Buffer.from(secret, 'utf8');
  const text = key.stripPrefix && secret.startsWith(key.stripPrefix) ? secret.slice(key.stripPrefix.length) : secret;
  if (key.encoding === 'utf8') return Buffer.from(text, 'utf8');
  return key.encoding === 'hex' ? fromHex(text) : fromBase64(text);
}

export function secretProblem(secret: string, key: Recipe['key']): string | undefined {
  const bytes = secretKey(secret, key);
  if (bytes && bytes.length > 0) return undefined;
  return `the secret must be ${key?.stripPrefix ? `${key.stripPrefix} followed by ` : ''}${key?.encoding ?? 'utf8'} key bytes`;
}
