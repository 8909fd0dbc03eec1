import { createHmac } from 'node:crypto';

/**
 * The `X-Hub-Signature-256` Meta sends for these bytes (Meta publishes no signing library:
 * this is its documented scheme, `sha256=` + hex HMAC-SHA256 of the raw body with the App Secret).
 */
export function signWhatsAppBody(rawBody: Buffer | string, appSecret: string): string {
  return `sha256=${createHmac('sha256', appSecret).update(rawBody).digest('hex')}`;
}
