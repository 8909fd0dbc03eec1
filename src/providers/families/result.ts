/**
 * What a family's verify answers (contract §10.1 D, E). The wiring turns a refusal into its
 * status: `signature_*`, `timestamp_out_of_tolerance`, `key_url_not_allowed` → 401;
 * `sender_not_allowed` → 403; `key_unavailable` → 503 with Retry-After 2 (never a 401: a
 * provider that sees 401 may disable the endpoint).
 */
export type FamilyReason =
  | 'signature_missing'
  | 'signature_invalid'
  | 'timestamp_out_of_tolerance'
  | 'key_url_not_allowed'
  | 'sender_not_allowed'
  | 'key_unavailable';

export type KeySourceKind = 'pinned' | 'fetched' | 'cache';

export interface FamilyAccepted {
  ok: true;
  /** The event kind the preset derives (absent: the preset has none; the caller's default applies). */
  kind?: string;
  /** The provider's delivery id, read only from what was verified (absent: the caller's body claim, §5). */
  deliveryId?: string;
  /** Who signed, where the family pins a sender: topic ARN, service account email (never a token). */
  sender?: string;
  /** Where the key came from, for the delivery log's diagnostics (§10.E). */
  keySource: KeySourceKind;
  kid?: string;
  /** A value to claim once beside the delivery id (Mailgun's token): seen before → a replay. */
  claimKey?: string;
}

/** `sender`: with `sender_not_allowed`, who signed (topic ARN, email; never a token), for the delivery log. */
export type FamilyRefused = { ok: false; reason: FamilyReason; sender?: string };

export type FamilyResult = FamilyAccepted | FamilyRefused;

export const refuse = (reason: FamilyReason): FamilyRefused => ({ ok: false, reason });

/** JSON.parse that answers undefined instead of throwing. */
export function parseJson(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    return undefined;
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A string of 1–`max` characters, else undefined. */
export function shortString(value: unknown, max = 256): string | undefined {
  return typeof value === 'string' && value.length > 0 && value.length <= max ? value : undefined;
}
