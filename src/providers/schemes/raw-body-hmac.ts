import type { RequestHead, SignatureReason, SignedRequest, VerifyResult } from '../provider';
import { decode, header, hmac, matchAny, refused, type Algorithm } from './signing';

const DIGEST_BYTES: Record<Algorithm, number> = { sha1: 20, sha256: 32, sha512: 64 };

export interface RawBodyScheme {
  header: string;
  algorithm: Algorithm;
  encoding: 'hex' | 'base64';
  /** e.g. `sha256=`; empty when the header carries the bare signature. */
  prefix: string;
  /** Several signatures in one header separated by this (PagerDuty: ','), each with the prefix. */
  separator?: string;
}

/** The presented signatures of the header, decoded; entries with another prefix (another version) are skipped. */
function presented(value: string, scheme: RawBodyScheme): Buffer[] {
  const entries = scheme.separator ? value.split(scheme.separator).map((entry) => entry.trim()) : [value];
  const found: Buffer[] = [];
  for (const entry of entries) {
    if (!entry.startsWith(scheme.prefix)) continue;
    const bytes = decode(entry.slice(scheme.prefix.length), scheme.encoding);
    if (bytes?.length === DIGEST_BYTES[scheme.algorithm]) found.push(bytes);
  }
  return found;
}

/** The most common scheme: one header, an HMAC of the raw body and nothing else. */
export function rawBodyHmac(scheme: RawBodyScheme) {
  const precheck = (head: RequestHead): SignatureReason | undefined => {
    const value = header(head.headers, scheme.header);
    if (!value) return 'signature_missing';
    return presented(value, scheme).length > 0 ? undefined : 'signature_missing';
  };
  return {
    precheck,
    verify(request: SignedRequest): VerifyResult {
      const problem = precheck(request);
      if (problem) return refused(problem);
      const signatures = presented(header(request.headers, scheme.header) as string, scheme);
      return matchAny(request.secrets, signatures, (secret) => hmac(scheme.algorithm, secret, request.raw));
    },
  };
}
