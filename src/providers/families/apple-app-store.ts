import { X509Certificate } from 'node:crypto';
import { compactVerify, decodeProtectedHeader, type ProtectedHeaderParameters } from 'jose';
import { APPLE_ROOT_CA_G3_PEM } from './apple-root';
import { isRecord, parseJson, refuse, shortString, type FamilyResult } from './result';

export type AppleEnvironment = 'Production' | 'Sandbox';

export interface AppleAppStoreOptions {
  /** The app's bundle id; a notification of another app is `sender_not_allowed`. */
  bundleId: string;
  /** The environment the trigger takes; a notification of the other is `sender_not_allowed`. */
  environment: AppleEnvironment;
}

export interface AppleAppStoreInput {
  raw: Buffer;
  options: AppleAppStoreOptions;
  /** Only when the trigger sets one, on `signedDate` (Apple's retries keep it: dedupe is the defence). */
  toleranceSeconds?: number;
  nowSeconds: number;
  /** The roots the x5c chain must end at; absent: Apple Root CA - G3 only (tests inject their own). */
  trustAnchors?: readonly X509Certificate[];
}

/** Longer than any notification Apple signs (a few KB, with nested JWS). */
const MAX_PAYLOAD_LENGTH = 65_536;
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const BASE64 = /^[A-Za-z0-9+/]{1,8000}={0,2}$/;
/** DER of the extension OIDs Apple's library requires: App Store receipt signing (leaf), Apple WWDR intermediate. */
const LEAF_OID = Buffer.from('060a2a864886f76364060b01', 'hex'); // 1.2.840.113635.100.6.11.1
const INTERMEDIATE_OID = Buffer.from('060a2a864886f76364060201', 'hex'); // 1.2.840.113635.100.6.2.1

let appleRoot: X509Certificate | undefined;
const defaultAnchors = () => [(appleRoot ??= new X509Certificate(APPLE_ROOT_CA_G3_PEM))];

/**
 * Apple App Store Server Notifications v2 (contract §10.1 D): the body `{ signedPayload }` is an
 * ES256 JWS whose `x5c` (leaf, intermediate, root) must chain to Apple Root CA - G3 pinned in the
 * gateway: the only family where a certificate inside the request is used, and only the two
 * below the pinned root (the sent root is ignored). Apple's certificate OIDs as its library
 * checks them; `bundleId` and `environment` must be the trigger's. Kind
 * `notificationType[.subtype]`; id `notificationUUID`.
 */
export async function verifyAppleAppStore(input: AppleAppStoreInput): Promise<FamilyResult> {
  const body = parseJson(input.raw);
  const jws = isRecord(body) ? body.signedPayload : undefined;
  if (typeof jws !== 'string' || jws.length > MAX_PAYLOAD_LENGTH || !COMPACT_JWS.test(jws)) return refuse('signature_missing');
  let header: ProtectedHeaderParameters;
  try {
    header = decodeProtectedHeader(jws);
  } catch {
    return refuse('signature_missing');
  }
  if (header.alg !== 'ES256') return refuse('signature_invalid');
  const leaf = chainedLeaf(header.x5c, input.trustAnchors ?? defaultAnchors(), input.nowSeconds);
  if (!leaf) return refuse('signature_invalid');
  let payload: unknown;
  try {
    const verified = await compactVerify(jws, leaf.publicKey, { algorithms: ['ES256'] });
    payload = JSON.parse(Buffer.from(verified.payload).toString('utf8'));
  } catch {
    return refuse('signature_invalid');
  }
  if (!isRecord(payload)) return refuse('signature_invalid');
  if (input.toleranceSeconds !== undefined) {
    const signedMs = payload.signedDate;
    if (typeof signedMs !== 'number' || !(Math.abs(input.nowSeconds - signedMs / 1000) <= input.toleranceSeconds)) {
      return refuse('timestamp_out_of_tolerance');
    }
  }
  const app = notificationApp(payload);
  if (app.bundleId !== input.options.bundleId || app.environment !== input.options.environment) {
    return { ok: false, reason: 'sender_not_allowed', ...(app.bundleId ? { sender: app.bundleId } : {}) };
  }
  const type = shortString(payload.notificationType, 64);
  const subtype = shortString(payload.subtype, 64);
  return {
    ok: true,
    kind: type && subtype ? `${type}.${subtype}` : type,
    deliveryId: shortString(payload.notificationUUID, 128),
    sender: app.bundleId,
    keySource: 'pinned',
  };
}

/** The leaf of `x5c` when leaf ← intermediate (a CA) ← a pinned anchor, each valid now and marked as Apple marks them. */
function chainedLeaf(x5c: unknown, anchors: readonly X509Certificate[], nowSeconds: number): X509Certificate | undefined {
  if (!Array.isArray(x5c) || x5c.length < 2 || x5c.length > 3 || !x5c.every((entry) => typeof entry === 'string' && BASE64.test(entry))) {
    return undefined;
  }
  let leaf: X509Certificate;
  let intermediate: X509Certificate;
  try {
    leaf = new X509Certificate(Buffer.from(x5c[0], 'base64'));
    intermediate = new X509Certificate(Buffer.from(x5c[1], 'base64'));
  } catch {
    return undefined;
  }
  const root = anchors.find((anchor) => issuedBy(intermediate, anchor) && validAt(anchor, nowSeconds));
  const linked = root !== undefined && intermediate.ca && !leaf.ca && issuedBy(leaf, intermediate);
  const marked = linked && leaf.raw.includes(LEAF_OID) && intermediate.raw.includes(INTERMEDIATE_OID);
  return marked && validAt(leaf, nowSeconds) && validAt(intermediate, nowSeconds) ? leaf : undefined;
}

/** The app a notification is about: `data`, `summary` or `externalPurchaseToken`, as Apple's library reads them. */
function notificationApp(payload: Record<string, unknown>): { bundleId?: string; environment?: string } {
  for (const field of ['data', 'summary', 'appData'] as const) {
    const part = payload[field];
    if (isRecord(part)) return { bundleId: shortString(part.bundleId), environment: shortString(part.environment, 32) };
  }
  const token = payload.externalPurchaseToken;
  if (isRecord(token)) {
    const id = shortString(token.externalPurchaseId);
    return { bundleId: shortString(token.bundleId), environment: id?.startsWith('SANDBOX') ? 'Sandbox' : 'Production' };
  }
  return {};
}

function issuedBy(certificate: X509Certificate, issuer: X509Certificate): boolean {
  try {
    return certificate.checkIssued(issuer) && certificate.verify(issuer.publicKey);
  } catch {
    return false;
  }
}

function validAt(certificate: X509Certificate, nowSeconds: number): boolean {
  const nowMs = nowSeconds * 1000;
  return Date.parse(certificate.validFrom) <= nowMs && nowMs < Date.parse(certificate.validTo);
}
