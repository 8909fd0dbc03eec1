import { z } from 'zod';
import { text, UNKNOWN_KIND } from './body';
import type { Provider } from './provider';
import { decode, equalToken, header, hmac, matchAny, refused } from './schemes/signing';

const optionsSchema = z.strictObject({ verifyCode: z.string().min(1).max(256) });

const SIGNATURE_HEADER = 'x-fitbit-signature';
const SHA1_BYTES = 20;

function presented(headers: Parameters<Provider['precheck']>[0]['headers']): Buffer | undefined {
  const value = header(headers, SIGNATURE_HEADER);
  const bytes = value === undefined ? undefined : decode(value, 'base64');
  return bytes?.length === SHA1_BYTES ? bytes : undefined;
}

const EMPTY = { 'Content-Type': 'text/plain; charset=utf-8' };

/**
 * Fitbit Subscriptions API: X-Fitbit-Signature is the base64 HMAC-SHA1 of the raw body keyed by
 * `<client secret>&` (OAuth 1 style, an empty token secret); the trigger's secret is the client
 * secret as Fitbit shows it. The subscriber check is a GET ?verify=<code>: 204 for the
 * subscriber's verification code (options.verifyCode), 404 for any other, as Fitbit requires
 * (it sends a wrong one on purpose). Notifications are acknowledged 204.
 */
export const fitbit: Provider = {
  name: 'fitbit',
  title: 'Fitbit (Subscriptions API)',
  verifies: 'x-fitbit-signature: <base64 HMAC-SHA1 of the raw body>, key = the client secret followed by "&"; GET ?verify= checked against options.verifyCode',
  deliveryIdSource: 'none from Fitbit: the body fingerprint (5 min) is the dedupe',
  optionsSchema: optionsSchema as unknown as z.ZodType<Record<string, unknown>>,
  signatureHeaders: () => [SIGNATURE_HEADER],
  precheck: (head) => (presented(head.headers) ? undefined : 'signature_missing'),
  verify(request) {
    const signature = presented(request.headers);
    if (!signature) return refused('signature_missing');
    return matchAny(request.secrets, [signature], (secret) => hmac('sha1', `${secret}&`, request.raw));
  },
  handshake: {
    method: 'GET',
    signed: false,
    describe: 'GET ?verify=<code>: 204 when it equals options.verifyCode, else 404 (Fitbit sends both)',
    answer({ query, options }) {
      const code = query.verify;
      if (code === undefined) return undefined;
      if (typeof code !== 'string' || code.length > 256) return 'invalid';
      const expected = typeof options.verifyCode === 'string' ? options.verifyCode : undefined;
      if (expected !== undefined && equalToken(code, expected)) return { status: 204, headers: {}, body: '' };
      return { status: 404, headers: EMPTY, body: '' };
    },
  },
  acknowledgement: 'no-content',
  // A batch of notifications: the first one's collectionType (activities, body, foods, sleep, userRevokedAccess).
  kind: (_headers, body) => text(body, '0', 'collectionType') ?? UNKNOWN_KIND,
  deliveryId: () => undefined,
};
