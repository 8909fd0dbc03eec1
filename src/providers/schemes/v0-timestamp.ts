import type { RequestHead, SignatureReason, SignedRequest, VerifyResult } from '../provider';
import { header, hmac, matchAny, prefixed, refused, timestampProblem, unixSeconds } from './signing';

export interface V0TimestampScheme {
  /** `v0=<hex HMAC-SHA256>` */
  signatureHeader: string;
  /** Unix seconds; signed together with the body. */
  timestampHeader: string;
  /** Reads the timestamp header as seconds (a scheme may accept another unit). */
  seconds?: (value: string) => number | undefined;
}

/**
 * Slack's and Zoom's scheme: `v0=` + hex HMAC-SHA256 of `v0:{timestamp}:{raw body}`, the
 * timestamp within the tolerance both ways.
 */
export function v0TimestampHmac(scheme: V0TimestampScheme) {
  const seconds = scheme.seconds ?? unixSeconds;
  const precheck = (head: RequestHead): SignatureReason | undefined => {
    const value = header(head.headers, scheme.signatureHeader);
    const timestamp = header(head.headers, scheme.timestampHeader);
    if (!value || !timestamp) return 'signature_missing';
    const at = seconds(timestamp);
    if (at === undefined || prefixed(value, 'v0=', 'hex')?.length !== 32) return 'signature_missing';
    return timestampProblem(at, head.nowSeconds, head.toleranceSeconds);
  };
  return {
    precheck,
    verify(request: SignedRequest): VerifyResult {
      const problem = precheck(request);
      if (problem) return refused(problem);
      const presented = prefixed(header(request.headers, scheme.signatureHeader) as string, 'v0=', 'hex') as Buffer;
      const timestamp = header(request.headers, scheme.timestampHeader) as string;
      return matchAny(request.secrets, [presented], (secret) => hmac('sha256', secret, `v0:${timestamp}:`, request.raw));
    },
  };
}
