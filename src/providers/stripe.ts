import { joinKind, text } from './body';
import type { Provider, RequestHead } from './provider';
import { fromHex, header, hmac, matchAny, refused, timestampProblem, unixSeconds } from './schemes/signing';

const SIGNATURE = 'stripe-signature';

/** `t=<unix>,v1=<hex>[,v1=<hex>][,v0=…]`: every v1 is a candidate (secret roll), other schemes are skipped. */
function parse(value: string): { timestamp?: string; v1: Buffer[] } {
  const parsed: { timestamp?: string; v1: Buffer[] } = { v1: [] };
  for (const item of value.split(',')) {
    const eq = item.indexOf('=');
    const key = item.slice(0, eq).trim();
    const val = item.slice(eq + 1).trim();
    if (key === 't') parsed.timestamp = val;
    else if (key === 'v1') {
      const bytes = fromHex(val);
      if (bytes) parsed.v1.push(bytes);
    }
  }
  return parsed;
}

function precheck(head: RequestHead) {
  const value = header(head.headers, SIGNATURE);
  if (!value) return 'signature_missing' as const;
  const { timestamp, v1 } = parse(value);
  const seconds = unixSeconds(timestamp);
  if (seconds === undefined || v1.length === 0) return 'signature_missing' as const;
  return timestampProblem(seconds, head.nowSeconds, head.toleranceSeconds);
}

export const stripe: Provider = {
  name: 'stripe',
  title: 'Stripe',
  verifies: 'Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "{t}.{raw body}"> (any v1 passes), key = the whole whsec_… string; t within toleranceSeconds both ways',
  deliveryIdSource: 'body id (evt_…)',
  deliveryIdFrom: 'signed',
  signsTimestamp: true,
  signatureHeaders: () => [SIGNATURE],
  precheck,
  verify(request) {
    const problem = precheck(request);
    if (problem) return refused(problem);
    const { timestamp, v1 } = parse(header(request.headers, SIGNATURE) as string);
    return matchAny(request.secrets, v1, (secret) => hmac('sha256', secret, `${timestamp}.`, request.raw));
  },
  kind: (_headers, body) => joinKind(text(body, 'type')),
  deliveryId: (_headers, body) => text(body, 'id'),
};
