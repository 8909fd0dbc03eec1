import { text } from '../body';
import type { Provider, RequestHead } from '../provider';
import { header } from '../schemes/signing';
import { twilioChat } from './chat';
import { presentedTwilioSignature, TWILIO_SIGNATURE_HEADER, verifyTwilio } from './signature';

const SIGNATURE = TWILIO_SIGNATURE_HEADER;

function precheck(head: RequestHead) {
  return presentedTwilioSignature(head.headers) ? undefined : ('signature_missing' as const);
}

export const twilio: Provider = {
  name: 'twilio',
  title: 'Twilio (Messaging and Voice callbacks on a plain trigger)',
  verifies: 'X-Twilio-Signature: base64 HMAC-SHA1 (key = Auth Token) of the public URL as called (PUBLIC_BASE_URL + path + query; with and without the default port) + the sorted POST parameters, or for JSON bodies the URL with bodySHA256 = hex SHA-256 of the raw body',
  deliveryIdSource: 'header I-Twilio-Idempotency-Token, else MessageSid:MessageStatus or CallSid:CallStatus',
  signatureHeaders: () => [SIGNATURE],
  precheck,
  verify: verifyTwilio,
  kind(_headers, body) {
    const messageStatus = text(body, 'MessageStatus');
    if (messageStatus && messageStatus !== 'received') return `message.status.${messageStatus}`;
    const callStatus = text(body, 'CallStatus');
    if (callStatus) return `call.status.${callStatus}`;
    if (text(body, 'MessageSid') || text(body, 'SmsSid')) return 'message.inbound';
    return 'unknown';
  },
  deliveryId(headers, body) {
    const token = header(headers, 'i-twilio-idempotency-token');
    if (token) return token;
    const message = text(body, 'MessageSid') ?? text(body, 'SmsSid');
    if (message) return `${message}:${text(body, 'MessageStatus') ?? text(body, 'SmsStatus') ?? ''}`;
    const call = text(body, 'CallSid');
    return call ? `${call}:${text(body, 'CallStatus') ?? ''}` : undefined;
  },
  acknowledgement: 'twiml',
  chat: twilioChat,
};
