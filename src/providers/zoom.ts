import { idText, joinKind, text } from './body';
import type { Provider } from './provider';
import { hmac, unixSeconds } from './schemes/signing';
import { v0TimestampHmac } from './schemes/v0-timestamp';

const SIGNATURE = 'x-zm-signature';
const TIMESTAMP = 'x-zm-request-timestamp';

/** Zoom documents seconds; a value in milliseconds is read as such rather than refused. */
function seconds(value: string): number | undefined {
  const n = unixSeconds(value);
  return n !== undefined && n > 1e11 ? n / 1000 : n;
}

const scheme = v0TimestampHmac({ signatureHeader: SIGNATURE, timestampHeader: TIMESTAMP, seconds });

export const zoom: Provider = {
  name: 'zoom',
  title: 'Zoom',
  verifies: 'x-zm-signature: v0=<hex HMAC-SHA256 of "v0:{x-zm-request-timestamp}:{raw body}">, key = the Secret Token; the timestamp within toleranceSeconds both ways',
  deliveryIdSource: 'none from Zoom: synthesized as {event}:{event_ts}:{payload.object.uuid or id}',
  deliveryIdFrom: 'signed',
  signsTimestamp: true,
  signatureHeaders: () => [SIGNATURE],
  precheck: scheme.precheck,
  verify: scheme.verify,
  handshake: {
    method: 'POST',
    signed: true,
    describe: 'endpoint.url_validation (signed POST): answered 200 {"plainToken","encryptedToken": hex HMAC-SHA256(secret, plainToken)}',
    answer({ body, secret }) {
      const plainToken = text(body, 'payload', 'plainToken');
      if (text(body, 'event') !== 'endpoint.url_validation' || !plainToken) return undefined;
      const encryptedToken = hmac('sha256', secret, plainToken).toString('hex');
      return { status: 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ plainToken, encryptedToken }) };
    },
  },
  kind: (_headers, body) => joinKind(text(body, 'event')),
  deliveryId(_headers, body) {
    const event = text(body, 'event');
    const at = idText(body, 'event_ts');
    const object = idText(body, 'payload', 'object', 'uuid') ?? idText(body, 'payload', 'object', 'id') ?? '';
    return event && at ? `${event}:${at}:${object}` : undefined;
  },
};
