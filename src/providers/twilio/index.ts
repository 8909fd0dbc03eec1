import { isObject } from '../body';
import type { Provider, RequestHead } from '../provider';
import { twilioChat } from './chat';
import { twilioDeliveryId, twilioKind } from './delivery-id';
import { bodyHashParameter, presentedTwilioSignature, TWILIO_SIGNATURE_HEADER, verifyTwilio } from './signature';

const SIGNATURE = TWILIO_SIGNATURE_HEADER;

function precheck(head: RequestHead) {
  return presentedTwilioSignature(head.headers) ? undefined : ('signature_missing' as const);
}

export const twilio: Provider = {
  name: 'twilio',
  title: 'Twilio (Messaging and Voice callbacks on a plain trigger)',
  verifies: 'X-Twilio-Signature: base64 HMAC-SHA1 (key = Auth Token) of the public URL as called (PUBLIC_BASE_URL + path + query; with and without the default port) + the sorted POST parameters, or for JSON bodies the URL with bodySHA256 = hex SHA-256 of the raw body',
  deliveryIdSource: 'signed parameters: MessageSid (SmsSid), with :MessageStatus for a status callback; CallSid:CallStatus for Voice (never the unsigned I-Twilio-Idempotency-Token)',
  deliveryIdFrom: 'signed',
  signatureHeaders: () => [SIGNATURE],
  precheck,
  verify: verifyTwilio,
  /** Twilio always posts a form, or JSON when it signs the body's hash in the URL (`bodySHA256`). */
  bodyKind: (url) => (bodyHashParameter(url) === undefined ? 'form' : 'json'),
  kind: (_headers, body) => (isObject(body) ? twilioKind(body) : 'unknown'),
  /** The same id as the Twilio channel's dedupe key (contract §10). */
  deliveryId: (_headers, body) => (isObject(body) ? twilioDeliveryId(body) : undefined),
  acknowledgement: 'twiml',
  chat: twilioChat,
};
