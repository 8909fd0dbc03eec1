import { rootCertificates } from 'node:tls';
import { verify as verifySignature, X509Certificate } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { allowedKeyUrl } from '../../keys/allow-list';
import type { KeyRequest, KeyResult } from '../../keys/key-fetcher';
import { parseCertificateChain } from '../../keys/key-material';
import { isRecord, parseJson, refuse, shortString, type FamilyResult, type KeySourceKind } from './result';

/** What the PayPal family needs of the key fetcher (src/keys/key-fetcher.ts satisfies it). */
export interface CertificateChainSource {
  certificateChain(request: KeyRequest): Promise<KeyResult<X509Certificate[]>>;
}

export interface PaypalOptions {
  /** The id of the webhook as PayPal's developer dashboard shows it: it is part of what is signed. */
  webhookId: string;
  /** Pinned by PAYPAL-CERT-URL (PEM: the signing certificate, then its intermediates): nothing fetched for these. */
  certificates?: Readonly<Record<string, string>>;
}

/** The PAYPAL-* headers as sent. */
export interface PaypalHeaders {
  transmissionId: string | undefined;
  transmissionTime: string | undefined;
  transmissionSig: string | undefined;
  certUrl: string | undefined;
  authAlgo: string | undefined;
}

export interface PaypalInput {
  headers: PaypalHeaders;
  raw: Buffer;
  options: PaypalOptions;
  keys: CertificateChainSource;
  toleranceSeconds: number;
  nowSeconds: number;
  /** The roots the signing certificate must chain to; absent: the public roots Node ships (tests inject their own). */
  trustAnchors?: readonly X509Certificate[];
}

const BASE64 = /^[A-Za-z0-9+/]{1,1400}={0,2}$/;
const ID = /^[A-Za-z0-9-]{1,64}$/;
/** RFC 3339 as PayPal sends it (`2016-09-21T22:00:46Z`), fractions and offsets allowed. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/;
/** The subject of PayPal's signing certificates (`messageverificationcerts.paypal.com`, sandbox alike). */
const PAYPAL_SUBJECT = /(?:^|\n)CN=[a-z0-9.-]*\.paypal\.com(?:\n|$)/;
/** Intermediates walked at most: PayPal's chain has one. */
const MAX_CHAIN_STEPS = 4;

let publicRoots: X509Certificate[] | undefined;
const defaultAnchors = () => (publicRoots ??= rootCertificates.map((pem) => new X509Certificate(pem)));

/** `transmissionId|transmissionTime|webhookId|crc32(body)`, the CRC-32 in decimal (PayPal's guide). */
export function paypalSignedString(transmissionId: string, transmissionTime: string, webhookId: string, raw: Buffer): string {
  return `${transmissionId}|${transmissionTime}|${webhookId}|${crc32(raw)}`;
}

/**
 * PayPal (contract §10.1 D): `PAYPAL-TRANSMISSION-SIG` is base64 RSA-SHA256 over
 * `transmissionId|transmissionTime|webhookId|crc32(body)` with the certificate at
 * `PAYPAL-CERT-URL`, pinned or fetched only when the URL is PayPal's (else `key_url_not_allowed`,
 * nothing fetched), which must be PayPal's and chain to a public root; the transmission time
 * within the tolerance. Kind body `event_type`; id `PAYPAL-TRANSMISSION-ID`.
 */
export async function verifyPaypal(input: PaypalInput): Promise<FamilyResult> {
  const { transmissionId, transmissionTime, transmissionSig, certUrl, authAlgo } = input.headers;
  if (!transmissionId || !transmissionTime || !transmissionSig || !certUrl) return refuse('signature_missing');
  if (!ID.test(transmissionId) || !RFC3339.test(transmissionTime) || !BASE64.test(transmissionSig)) return refuse('signature_missing');
  if (authAlgo !== undefined && authAlgo !== 'SHA256withRSA') return refuse('signature_invalid');
  if (!allowedKeyUrl('paypal-certificate', certUrl)) return refuse('key_url_not_allowed');
  const chain = await chainFor(certUrl, input);
  if (!chain.ok) return chain;
  const [leaf, ...intermediates] = chain.value;
  if (!PAYPAL_SUBJECT.test(leaf.subject) || !chainsToAnchor(leaf, intermediates, input.trustAnchors ?? defaultAnchors(), input.nowSeconds)) {
    return refuse('signature_invalid');
  }
  const signed = Buffer.from(paypalSignedString(transmissionId, transmissionTime, input.options.webhookId, input.raw));
  if (!verifySignature('sha256', signed, leaf.publicKey, Buffer.from(transmissionSig, 'base64'))) return refuse('signature_invalid');
  const sent = Date.parse(transmissionTime) / 1000;
  if (!(Math.abs(input.nowSeconds - sent) <= input.toleranceSeconds)) return refuse('timestamp_out_of_tolerance');
  const body = parseJson(input.raw);
  return { ok: true, kind: isRecord(body) ? shortString(body.event_type, 128) : undefined, deliveryId: transmissionId, keySource: chain.keySource };
}

async function chainFor(
  url: string,
  input: PaypalInput,
): Promise<{ ok: true; value: X509Certificate[]; keySource: KeySourceKind } | { ok: false; reason: 'key_unavailable' | 'key_url_not_allowed' }> {
  const pem = input.options.certificates?.[url];
  if (pem !== undefined) {
    const material = parseCertificateChain(Buffer.from(pem), input.nowSeconds * 1000);
    return material ? { ok: true, value: material.value, keySource: 'pinned' } : { ok: false, reason: 'key_unavailable' };
  }
  return input.keys.certificateChain({ preset: 'paypal', source: 'paypal-certificate', url });
}

/** Each step issued and signed by the next (an intermediate must be a CA), ending at an anchor; all valid now. */
function chainsToAnchor(leaf: X509Certificate, intermediates: X509Certificate[], anchors: readonly X509Certificate[], nowSeconds: number): boolean {
  let current = leaf;
  for (let step = 0; step <= MAX_CHAIN_STEPS; step++) {
    if (!validAt(current, nowSeconds)) return false;
    const anchor = anchors.find((root) => issuedBy(current, root) && validAt(root, nowSeconds));
    if (anchor) return true;
    const next = intermediates.find((candidate) => candidate !== current && candidate.ca && issuedBy(current, candidate));
    if (!next) return false;
    current = next;
  }
  return false;
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
