import { Refusal } from '../outcomes/refusal';
import type { FamilyReason, FamilyResult } from './families/result';
import type { Provider } from './provider';
import type { SignatureDiagnostics } from './diagnostics';

const MESSAGES: Record<FamilyReason, string> = {
  signature_missing: 'the request carries no usable signature',
  signature_invalid: 'the signature does not match',
  timestamp_out_of_tolerance: 'the signed timestamp is outside the tolerance',
  key_url_not_allowed: "the request names a key URL that is not on the preset's allow-list; nothing was fetched",
  sender_not_allowed: 'the signature is valid, but its sender is not one the trigger lists',
  key_unavailable: "the sender's key could not be had in time; send it again later",
};

/**
 * A family's refusal as the request's (contract §10.1 E): `signature_*`, `timestamp_*` and
 * `key_url_not_allowed` 401, `sender_not_allowed` 403 (both failed authentications),
 * `key_unavailable` 503 with Retry-After (never a 401: a provider that sees one may disable the
 * endpoint; it spends no quota). The refused sender is never in the answer, only in the log.
 */
export function familyRefusal(reason: FamilyReason): Refusal {
  return new Refusal(reason, MESSAGES[reason]);
}

/**
 * What the delivery log adds for these families (contract §10.1 E): where the key came from,
 * its kid, whether the key URL the request named was on the allow-list, the sender (topic ARN,
 * email). Never a token, and never a URL (so never its query).
 */
export function familyDiagnostics(provider: Provider, result: FamilyResult | undefined): Pick<SignatureDiagnostics, 'keySource' | 'kid' | 'keyUrlAllowed' | 'sender'> {
  if (!result) return {};
  const keyUrlAllowed = !provider.keyUrlInRequest
    ? undefined
    : result.ok || (result.reason !== 'key_url_not_allowed' && result.reason !== 'signature_missing')
      ? true
      : result.reason === 'key_url_not_allowed'
        ? false
        : undefined;
  return {
    ...(result.ok && { keySource: result.keySource }),
    ...(result.ok && result.kid !== undefined && { kid: result.kid.slice(0, 128) }),
    ...(keyUrlAllowed !== undefined && { keyUrlAllowed }),
    ...(result.sender !== undefined && { sender: result.sender.slice(0, 256) }),
    ...(!result.ok && result.reason === 'key_unavailable' && { keySource: 'fetched' as const }),
  };
}
