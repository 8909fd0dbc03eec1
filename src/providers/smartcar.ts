import { idText, isObject, rawJson, text, UNKNOWN_KIND } from './body';
import type { Provider } from './provider';
import { header, hmac, refused } from './schemes/signing';
import { rawBodyHmac } from './schemes/raw-body-hmac';

const scheme = rawBodyHmac({ header: 'sc-signature', algorithm: 'sha256', encoding: 'hex', prefix: '' });

/**
 * The verify answer is HMAC(management token, challenge), exactly the signature of a delivery
 * whose body is the challenge: only challenges of this shape are answered, and a delivery must
 * be a JSON object, which no such challenge is (as X's CRC).
 */
const CHALLENGE = /^[A-Za-z0-9_-]{1,128}$/;

/** The challenge of a verify event: `{eventName: "verify", payload: {challenge}}`, or the newer `{eventType: "VERIFY", data: {challenge}}`. */
function verifyChallenge(body: unknown): unknown {
  if (text(body, 'eventName') === 'verify') return isObject(body) && isObject(body.payload) ? body.payload.challenge : undefined;
  if (text(body, 'eventType') === 'VERIFY') return isObject(body) && isObject(body.data) ? body.data.challenge : undefined;
  return undefined;
}

/**
 * Smartcar webhooks: SC-Signature is the hex HMAC-SHA256 of the raw body keyed by the
 * application management token (the trigger's secret). The verify event is answered with
 * `{"challenge": hex HMAC-SHA256(management token, challenge)}`, signed or not: its answer is the
 * proof Smartcar checks and nothing of it is published; a signature it carries is checked.
 * So a request without SC-Signature is refused only once its body shows it is no verify event.
 */
export const smartcar: Provider = {
  name: 'smartcar',
  title: 'Smartcar (webhooks)',
  verifies: 'sc-signature: <hex HMAC-SHA256 of the raw body>, key = the application management token; the body must be a JSON object',
  deliveryIdSource: 'body eventId (newer payloads); older ones have none: the body fingerprint (5 min) is the dedupe',
  deliveryIdFrom: 'signed',
  signatureHeaders: () => ['sc-signature'],
  precheck: (head) => (header(head.headers, 'sc-signature') === undefined ? undefined : scheme.precheck(head)),
  verify(request) {
    if (header(request.headers, 'sc-signature') === undefined) {
      const unsignedVerify = verifyChallenge(rawJson(request.raw)) !== undefined && request.secrets.length > 0;
      return unsignedVerify ? { ok: true, secret: request.secrets[0] } : refused('signature_missing');
    }
    const result = scheme.verify(request);
    if (!result.ok) return result;
    // A valid MAC over anything but a JSON object can only come from a verify answer: a forgery.
    return isObject(rawJson(request.raw)) ? result : refused('signature_invalid');
  },
  handshake: {
    method: 'POST',
    signed: true,
    describe: 'verify event (POST {eventName:"verify",payload:{challenge}} or {eventType:"VERIFY",data:{challenge}}): 200 {"challenge": hex HMAC-SHA256(management token, challenge)}; another challenge shape 400',
    answer({ body, secret }) {
      const challenge = verifyChallenge(body);
      if (challenge === undefined) return undefined;
      if (typeof challenge !== 'string' || !CHALLENGE.test(challenge)) return 'invalid';
      const answer = hmac('sha256', secret, challenge).toString('hex');
      return { status: 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ challenge: answer }) };
    },
  },
  kind: (_headers, body) => text(body, 'eventType') ?? text(body, 'eventName') ?? UNKNOWN_KIND,
  deliveryId: (_headers, body) => idText(body, 'eventId'),
};
