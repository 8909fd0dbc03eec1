import type { z } from 'zod';

const FRAMING = 'read by Node to frame the request';
const HOP_BY_HOP = 'a hop-by-hop header, which proxies consume';
const BEHIND_PROXY = 'read for the client address or scheme behind TRUST_PROXY (logged)';

/**
 * Headers the gateway (or Node beneath it) reads for itself, by lower-case name, and why: a
 * trigger's token in one of them would be published, logged, echoed or consumed on the way
 * (contract §13.1). `Authorization` is not among them: it is the default token header, never
 * published or logged. A provider's own headers are not either (docs/choices.md).
 */
const RESERVED = new Map<string, string>([
  ['idempotency-key', 'the idempotency key, published as data.idempotencyKey and kept in the delivery log'],
  ['x-request-id', 'echoed in every answer and logged as the request id'],
  ['traceparent', 'published as the event’s trace context'],
  ['tracestate', 'published as the event’s trace context'],
  ['content-type', 'published as data.contentType and read to parse the body'],
  ['content-length', FRAMING],
  ['transfer-encoding', FRAMING],
  ['host', 'published and read for the URL a provider signs'],
  ['expect', 'answered by Node itself (100-continue, or 417)'],
  ['connection', HOP_BY_HOP],
  ['keep-alive', HOP_BY_HOP],
  ['te', HOP_BY_HOP],
  ['trailer', HOP_BY_HOP],
  ['upgrade', HOP_BY_HOP],
  ['x-forwarded-for', BEHIND_PROXY],
  ['x-forwarded-proto', BEHIND_PROXY],
  ['x-forwarded-host', BEHIND_PROXY],
]);

/** A zod refinement of `auth.header`: 400 at PUT naming the header and what the gateway does with it. */
export function refuseReservedTokenHeader(name: string, ctx: z.RefinementCtx): void {
  const use = RESERVED.get(name.toLowerCase());
  if (use) ctx.addIssue({ code: 'custom', message: `${name} cannot carry a token: it is ${use}` });
}
