import { createHash } from 'node:crypto';
import { text } from './body';
import type { Provider, RequestHead } from './provider';
import { equalBytes, fromBase64, fromHex, header, hmac, matchAny, refused } from './signing';

const SIGNATURE = 'x-twilio-signature';

function precheck(head: RequestHead) {
  const value = header(head.headers, SIGNATURE);
  if (!value) return 'signature_missing' as const;
  return fromBase64(value)?.length === 20 ? undefined : ('signature_missing' as const);
}

/**
 * The URL exactly as Twilio called it, and the same without the port and with the scheme's
 * default port: Twilio signs either form depending on the product (twilio-node tries both).
 */
export function urlVariants(url: string): string[] {
  const match = /^(https?):\/\/([^/?#]*)(.*)$/i.exec(url);
  if (!match) return [url];
  const [, scheme, authority, rest] = match;
  const host = authority.replace(/:\d+$/, '');
  const defaultPort = scheme.toLowerCase() === 'https' ? '443' : '80';
  const variants = new Set([url, `${scheme}://${host}${rest}`]);
  if (host === authority) variants.add(`${scheme}://${host}:${defaultPort}${rest}`);
  return [...variants];
}

/** The POST parameters sorted by name, each name followed by its (de-duplicated, sorted) values. */
export function signedParameters(raw: Buffer): string {
  const params = new URLSearchParams(raw.toString('utf8'));
  const names = [...new Set(params.keys())].sort();
  return names.map((name) => [...new Set(params.getAll(name))].sort().map((value) => name + value).join('')).join('');
}

/** A JSON body is signed through the URL's `bodySHA256` (hex SHA-256 of the raw body). */
function bodyHash(url: string): string | undefined {
  const query = url.indexOf('?');
  return query < 0 ? undefined : (new URLSearchParams(url.slice(query + 1)).get('bodySHA256') ?? undefined);
}

export const twilio: Provider = {
  name: 'twilio',
  title: 'Twilio (Messaging and Voice callbacks on a plain trigger)',
  verifies: 'X-Twilio-Signature: base64 HMAC-SHA1 (key = Auth Token) of the public URL as called (PUBLIC_BASE_URL + path + query; with and without the default port) + the sorted POST parameters, or for JSON bodies the URL with bodySHA256 = hex SHA-256 of the raw body',
  deliveryIdSource: 'header I-Twilio-Idempotency-Token, else MessageSid:MessageStatus or CallSid:CallStatus',
  signatureHeaders: () => [SIGNATURE],
  precheck,
  verify(request) {
    const problem = precheck(request);
    if (problem) return refused(problem);
    const presented = fromBase64(header(request.headers, SIGNATURE) as string) as Buffer;
    const hash = bodyHash(request.url);
    if (hash !== undefined) {
      const expected = createHash('sha256').update(request.raw).digest();
      if (!equalBytes(fromHex(hash) ?? Buffer.alloc(0), expected)) return refused('signature_invalid');
    }
    const params = hash === undefined ? signedParameters(request.raw) : '';
    for (const url of urlVariants(request.url)) {
      const result = matchAny(request.secrets, [presented], (secret) => hmac('sha1', secret, url, params));
      if (result.ok) return result;
    }
    return refused('signature_invalid');
  },
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
};
