import type { IncomingHttpHeaders } from 'node:http';
import type { RequestHead, SignatureReason, SignedRequest, VerifyResult } from '../provider';
import { equalToken, header } from './signing';

/** The header's value against every secret, in constant time. */
export function checkToken(headerName: string, headers: IncomingHttpHeaders, secrets: readonly string[]): VerifyResult {
  const presented = header(headers, headerName);
  if (!presented) return { ok: false, reason: 'signature_missing' };
  let matched: string | undefined;
  for (const secret of secrets) if (equalToken(presented, secret) && matched === undefined) matched = secret;
  return matched === undefined ? { ok: false, reason: 'signature_invalid' } : { ok: true, secret: matched };
}

/** Schemes that send the shared secret itself in a header (Telegram, GitLab): the whole check happens before the body. */
export function tokenScheme(headerName: string) {
  const check = (headers: IncomingHttpHeaders, secrets: readonly string[]) => checkToken(headerName, headers, secrets);
  return {
    precheck(head: RequestHead): SignatureReason | undefined {
      const result = check(head.headers, head.secrets);
      return result.ok ? undefined : result.reason;
    },
    verify: (request: SignedRequest) => check(request.headers, request.secrets),
  };
}
