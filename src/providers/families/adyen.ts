import { sha256Hex } from '../../security';
import { anyKeyMatches, hexKey } from './fields-hmac';
import { isRecord, parseJson, refuse, type FamilyAccepted, type FamilyRefused } from './result';

/** The fields Adyen's HMAC covers, in order (data.provider.signedFields, contract §10.H). */
export const ADYEN_SIGNED_FIELDS = [
  'pspReference',
  'originalReference',
  'merchantAccountCode',
  'merchantReference',
  'amount.value',
  'amount.currency',
  'eventCode',
  'success',
] as const;

/** What Adyen expects back (contract §10.1 D). */
export const ADYEN_ACKNOWLEDGEMENT = '[accepted]';

/** More items than Adyen batches; a larger list is not one of its notifications. */
const MAX_ITEMS = 100;
const BASE64 = /^[A-Za-z0-9+/]{43}=$/;

export interface AdyenInput {
  raw: Buffer;
  /** The HMAC key(s) in hex, as the Customer Area shows them (two while rotating). */
  secrets: readonly string[];
}

export interface AdyenItem {
  kind: string;
  deliveryId: string;
}

export type AdyenResult = (FamilyAccepted & { items: AdyenItem[] }) | FamilyRefused;

type Item = Record<string, unknown> & { amount: Record<string, unknown>; additionalData?: Record<string, unknown> };

/**
 * Adyen standard notifications (contract §10.1 D): the body is parsed first (the one family
 * that must), then every NotificationRequestItem's `additionalData.hmacSignature` must be the
 * base64 HMAC-SHA256 (hex-decoded key) of its eight signed fields joined by `:`. Only those
 * fields are authenticated. Kind `eventCode`; id `pspReference:eventCode`.
 */
export function verifyAdyen(input: AdyenInput): AdyenResult {
  const items = notificationItems(parseJson(input.raw));
  if (!items) return refuse('signature_missing');
  const keys = input.secrets.map(hexKey).filter((key): key is Buffer => key !== undefined);
  for (const item of items) {
    const signature = item.additionalData?.hmacSignature;
    if (typeof signature !== 'string' || !BASE64.test(signature)) return refuse('signature_missing');
    if (!anyKeyMatches(keys, signedString(item), Buffer.from(signature, 'base64'))) return refuse('signature_invalid');
  }
  const described = items.map((item) => ({ kind: String(item.eventCode), deliveryId: `${String(item.pspReference)}:${String(item.eventCode)}` }));
  return { ok: true, keySource: 'pinned', kind: described[0].kind, deliveryId: deliveryIdOf(described), items: described };
}

/** One item: its own id; several (rare): one id for the batch, derived from all of theirs. */
function deliveryIdOf(items: AdyenItem[]): string {
  if (items.length === 1) return items[0].deliveryId;
  return `adyen:${sha256Hex(items.map((item) => item.deliveryId).join('\n'))}`;
}

/** `pspReference:originalReference:…:success`; an absent field is empty, as Adyen's library joins it. */
function signedString(item: Item): string {
  const fields = [item.pspReference, item.originalReference, item.merchantAccountCode, item.merchantReference, item.amount.value, item.amount.currency, item.eventCode, item.success];
  return fields.map((value) => (value === undefined || value === null ? '' : String(value))).join(':');
}

const scalar = (value: unknown) => value === undefined || value === null || ['string', 'number', 'boolean'].includes(typeof value);

/** The items of an Adyen notification body, each with the fields the signature needs, else undefined. */
function notificationItems(body: unknown): Item[] | undefined {
  if (!isRecord(body) || !Array.isArray(body.notificationItems)) return undefined;
  const list = body.notificationItems;
  if (list.length === 0 || list.length > MAX_ITEMS) return undefined;
  const items: Item[] = [];
  for (const entry of list) {
    const item = isRecord(entry) ? entry.NotificationRequestItem : undefined;
    if (!isRecord(item) || !isRecord(item.amount)) return undefined;
    if (typeof item.pspReference !== 'string' || typeof item.eventCode !== 'string') return undefined;
    const values = [item.originalReference, item.merchantAccountCode, item.merchantReference, item.amount.value, item.amount.currency, item.success];
    if (!values.every(scalar)) return undefined;
    if (item.additionalData !== undefined && !isRecord(item.additionalData)) return undefined;
    items.push(item as Item);
  }
  return items;
}
