import type { IncomingHttpHeaders } from 'node:http';
import { joinKind } from './body';
import type { Provider, RequestHead } from './provider';
import { fromBase64, header, hmac, matchAny, refused } from './schemes/signing';

/** Classic webhooks send `X-Shopify-*`; "events" deliveries send the same names lower-case without `x-`. */
function shopifyHeader(headers: IncomingHttpHeaders, name: string): string | undefined {
  return header(headers, `x-shopify-${name}`) ?? header(headers, `shopify-${name}`);
}

function precheck(head: RequestHead) {
  const value = shopifyHeader(head.headers, 'hmac-sha256');
  if (!value) return 'signature_missing' as const;
  return fromBase64(value)?.length === 32 ? undefined : ('signature_missing' as const);
}

export const shopify: Provider = {
  name: 'shopify',
  title: 'Shopify',
  verifies: 'X-Shopify-Hmac-Sha256 (or shopify-hmac-sha256): base64 HMAC-SHA256 of the raw body, key = the app client secret (no timestamp: dedupe is the replay defence)',
  deliveryIdSource: 'header X-Shopify-Event-Id (or shopify-event-id), else X-Shopify-Webhook-Id',
  signatureHeaders: () => ['x-shopify-hmac-sha256', 'shopify-hmac-sha256'],
  precheck,
  verify(request) {
    const problem = precheck(request);
    if (problem) return refused(problem);
    const presented = fromBase64(shopifyHeader(request.headers, 'hmac-sha256') as string) as Buffer;
    return matchAny(request.secrets, [presented], (secret) => hmac('sha256', secret, request.raw));
  },
  kind: (headers) => joinKind(shopifyHeader(headers, 'topic')),
  deliveryId: (headers) => shopifyHeader(headers, 'event-id') ?? shopifyHeader(headers, 'webhook-id'),
};
