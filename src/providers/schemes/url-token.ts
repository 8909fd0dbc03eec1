import type { RequestHead, VerifyResult } from '../provider';
import { equalToken } from './signing';

/**
 * For senders that sign nothing (Strava, Monday): the operator registers the callback URL as
 * `<trigger URL>?token=<secret>` and the query's `token` must equal a secret (constant time).
 * `token` is a credential name, so it is never published. It authenticates the sender only.
 */
export function urlToken(head: Pick<RequestHead, 'query' | 'secrets'>): VerifyResult {
  const presented = head.query.token;
  if (presented === undefined || presented === '') return { ok: false, reason: 'signature_missing' };
  if (typeof presented !== 'string') return { ok: false, reason: 'signature_invalid' };
  let matched: string | undefined;
  for (const secret of head.secrets) if (secret !== '' && equalToken(presented, secret) && matched === undefined) matched = secret;
  return matched === undefined ? { ok: false, reason: 'signature_invalid' } : { ok: true, secret: matched };
}

export function urlTokenPrecheck(head: Pick<RequestHead, 'query' | 'secrets'>) {
  const result = urlToken(head);
  return result.ok ? undefined : result.reason;
}
