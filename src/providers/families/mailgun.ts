import { anyKeyMatches } from './fields-hmac';
import { isRecord, parseJson, refuse, shortString, type FamilyResult } from './result';

export interface MailgunInput {
  raw: Buffer;
  /** The HTTP webhook signing key(s) (two while rotating). */
  secrets: readonly string[];
  toleranceSeconds: number;
  nowSeconds: number;
}

const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;
const DIGITS = /^\d{1,12}$/;

/**
 * Mailgun webhooks (contract §10.1 D): the body's `signature.signature` is the hex
 * HMAC-SHA256 of `timestamp` + `token`, nothing else: `event-data` is not authenticated. The
 * timestamp must be within the tolerance, and the token is returned as `claimKey` for the caller
 * to claim once (Mailgun's advice), so a captured triple cannot carry other event data: a token
 * seen before is a replay. Kind `event-data.event`; id `event-data.id`.
 */
export function verifyMailgun(input: MailgunInput): FamilyResult {
  const body = parseJson(input.raw);
  const signed = isRecord(body) && isRecord(body.signature) ? body.signature : undefined;
  const timestamp = signed?.timestamp;
  const token = shortString(signed?.token, 256);
  const signature = signed?.signature;
  if (typeof timestamp !== 'string' || !DIGITS.test(timestamp) || !token || typeof signature !== 'string' || !HEX_SHA256.test(signature)) {
    return refuse('signature_missing');
  }
  const keys = input.secrets.map((secret) => Buffer.from(secret, 'utf8'));
  if (!anyKeyMatches(keys, timestamp + token, Buffer.from(signature, 'hex'))) return refuse('signature_invalid');
  if (Math.abs(input.nowSeconds - Number(timestamp)) > input.toleranceSeconds) return refuse('timestamp_out_of_tolerance');
  const event = isRecord(body) && isRecord(body['event-data']) ? body['event-data'] : {};
  return { ok: true, keySource: 'pinned', kind: shortString(event.event), deliveryId: shortString(event.id), claimKey: token };
}
