import { createHash } from 'node:crypto';
import { field, idText, isObject, rawJson, UNKNOWN_KIND } from './body';
import type { Provider } from './provider';
import { hmac, refused } from './schemes/signing';
import { rawBodyHmac } from './schemes/raw-body-hmac';

/**
 * The CRC answer is HMAC(consumer secret, crc_token), exactly the signature of a delivery whose
 * body is that token: only the token shape X sends is answered (contract §10), and a delivery
 * must be a JSON object, which no such token can be.
 */
const CRC_TOKEN = /^[A-Za-z0-9+/=_-]{1,128}$/;

const scheme = rawBodyHmac({ header: 'x-twitter-webhooks-signature', algorithm: 'sha256', encoding: 'base64', prefix: 'sha256=' });

function eventsKey(body: unknown): string | undefined {
  return isObject(body) ? Object.keys(body).find((key) => key.endsWith('_events')) : undefined;
}

export const x: Provider = {
  name: 'x',
  title: 'X (Twitter) Account Activity API',
  verifies: 'x-twitter-webhooks-signature: sha256=<base64 HMAC-SHA256 of the raw body>, key = the consumer (API) secret; the body must be a JSON object',
  deliveryIdSource: 'none from X: synthesized from for_user_id, the *_events key and the ids of its events',
  deliveryIdFrom: 'signed',
  signatureHeaders: () => ['x-twitter-webhooks-signature'],
  precheck: scheme.precheck,
  verify(request) {
    const result = scheme.verify(request);
    if (!result.ok) return result;
    // A valid MAC over anything but a JSON object can only come from the CRC answer: a forgery.
    return isObject(rawJson(request.raw)) ? result : refused('signature_invalid');
  },
  handshake: {
    method: 'GET',
    signed: false,
    describe: 'CRC GET ?crc_token=<1–128 of [A-Za-z0-9+/=_-]> : 200 {"response_token":"sha256=<base64 HMAC-SHA256(consumer secret, crc_token)>"}; another token 400',
    answer({ query, secret }) {
      const token = query.crc_token;
      if (token === undefined) return undefined;
      // Present but empty, repeated or of another shape: a CRC the gateway will not answer.
      if (typeof token !== 'string' || !CRC_TOKEN.test(token)) return 'invalid';
      const responseToken = `sha256=${hmac('sha256', secret, token).toString('base64')}`;
      return { status: 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ response_token: responseToken }) };
    },
  },
  kind: (_headers, body) => eventsKey(body) ?? UNKNOWN_KIND,
  deliveryId(_headers, body) {
    const key = eventsKey(body);
    const events = key ? field(body, key) : undefined;
    if (!key || !Array.isArray(events)) return undefined;
    const ids = events.map((event) => idText(event, 'id_str') ?? idText(event, 'id') ?? JSON.stringify(event));
    const digest = createHash('sha256').update(ids.join('\n')).digest('hex');
    return `x:${idText(body, 'for_user_id') ?? ''}:${key}:${digest}`;
  },
};
