import { field, joinKind, rawJson, text } from './body';
import type { Provider, RequestHead } from './provider';
import { fromHex, header, hmac, matchAny, refused, timestampProblem } from './schemes/signing';

const SIGNATURE = 'linear-signature';

function precheck(head: RequestHead) {
  const value = header(head.headers, SIGNATURE);
  if (!value) return 'signature_missing' as const;
  return fromHex(value)?.length === 32 ? undefined : ('signature_missing' as const);
}

/**
 * The signed body's `webhookTimestamp` (ms), as the Linear SDK reads it. Never the unsigned
 * Linear-Timestamp header: a replay could make an old body fresh with it (contract §10).
 */
function timestampMs(raw: Buffer): number | undefined {
  const value = field(rawJson(raw), 'webhookTimestamp');
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

export const linear: Provider = {
  name: 'linear',
  title: 'Linear',
  verifies: 'Linear-Signature: hex HMAC-SHA256 of the raw body; the signed body field webhookTimestamp (ms) within toleranceSeconds (default 60, as the Linear SDK) both ways',
  deliveryIdSource: 'header Linear-Delivery (unsigned: the body is claimed too)',
  signsTimestamp: true,
  defaultToleranceSeconds: 60,
  signatureHeaders: () => [SIGNATURE],
  precheck,
  verify(request) {
    const problem = precheck(request);
    if (problem) return refused(problem);
    const presented = fromHex(header(request.headers, SIGNATURE) as string) as Buffer;
    const result = matchAny(request.secrets, [presented], (secret) => hmac('sha256', secret, request.raw));
    if (!result.ok) return result;
    const ms = timestampMs(request.raw);
    if (ms === undefined) return refused('timestamp_missing');
    const stale = timestampProblem(ms / 1000, request.nowSeconds, request.toleranceSeconds);
    return stale ? refused(stale) : result;
  },
  kind: (_headers, body) => joinKind(text(body, 'type'), text(body, 'action')),
  deliveryId: (headers) => header(headers, 'linear-delivery'),
};
