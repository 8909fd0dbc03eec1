import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/**
 * Why a signed delivery was refused, for the delivery log (contract §13): the shape of what
 * the sender sent, never a secret and never the signature the gateway expected (it is not
 * even computed here), nor the signature values the sender sent.
 */
export interface SignatureDiagnostics {
  scheme: string;
  /** The signature header found (lower case), or null when none of the scheme's was there. */
  headerSeen: string | null;
  signaturesInHeader: number;
  encodingLooksLike: 'hex' | 'base64' | 'other';
  /** The signed timestamp the sender sent (Unix seconds), where the scheme signs one. */
  timestamp?: number;
  /** Gateway clock minus `timestamp`: positive when the delivery is late. */
  skewSeconds?: number;
  toleranceSeconds?: number;
  secretsTried: number;
  /** Null when the request was refused on its headers, before its body was read. */
  bodySha256: string | null;
  bodyBytes: number;
  /** Contract §10.1 E, for presets whose key may be fetched: where it came from. */
  keySource?: 'pinned' | 'fetched' | 'cache';
  kid?: string;
  /** Whether the key URL the request named was on the preset's allow-list (never the URL itself). */
  keyUrlAllowed?: boolean;
  /** Who signed, where the preset pins a sender (topic ARN, email; never a token). */
  sender?: string;
}

export interface SchemeShape {
  scheme: string;
  /** Where the scheme looks for signatures (the preset's signatureHeaders), in order. */
  signatureHeaders: readonly string[];
  /** A timestamp header of the scheme's own (the generic `hmac`'s `timestampHeader` option). */
  timestampHeader?: string;
  secrets: number;
  toleranceSeconds: number;
}

/** Timestamp headers of the presets that sign one (Standard Webhooks, Svix, Slack, Zoom). */
const TIMESTAMP_HEADERS = ['webhook-timestamp', 'svix-timestamp', 'x-slack-request-timestamp', 'x-zm-request-timestamp'];

export function signatureDiagnostics(
  shape: SchemeShape,
  headers: IncomingHttpHeaders,
  body: { raw?: Buffer; nowSeconds: number },
): SignatureDiagnostics {
  const headerSeen = shape.signatureHeaders.map((name) => name.toLowerCase()).find((name) => headerValue(headers, name) !== undefined);
  const parts = headerSeen ? signatureParts(headerValue(headers, headerSeen) as string) : { signatures: [] };
  const timestamp = parts.timestamp ?? headerTimestamp(headers, shape.timestampHeader);
  const declared = Number(headers['content-length']);
  return {
    scheme: shape.scheme,
    headerSeen: headerSeen ?? null,
    signaturesInHeader: parts.signatures.length,
    encodingLooksLike: encodingOf(parts.signatures[0]),
    ...(timestamp !== undefined && {
      timestamp,
      skewSeconds: body.nowSeconds - timestamp,
      toleranceSeconds: shape.toleranceSeconds,
    }),
    secretsTried: shape.secrets,
    bodySha256: body.raw ? createHash('sha256').update(body.raw).digest('hex') : null,
    bodyBytes: body.raw ? body.raw.length : Number.isFinite(declared) ? declared : 0,
  };
}

function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * The signatures of a header in the forms the presets use: `v1,<b64> v1,<b64>` (Standard
 * Webhooks), `t=<ts>,v1=<hex>,v0=<hex>` (Stripe), `v1=<hex>,v1=<hex>` (PagerDuty),
 * `sha256=<hex>` (GitHub), `v0=<hex>` (Slack), or the bare value (Shopify, a token).
 */
function signatureParts(value: string): { signatures: string[]; timestamp?: number } {
  const signatures: string[] = [];
  let timestamp: number | undefined;
  for (const token of value.trim().split(/\s+/).slice(0, 64)) {
    const versioned = /^v[0-9]+[a-z]*,(.+)$/.exec(token);
    if (versioned) {
      signatures.push(versioned[1]);
      continue;
    }
    for (const part of token.split(',').slice(0, 64)) {
      if (part === '') continue;
      const stamp = /^t=([0-9]{1,12})$/.exec(part);
      if (stamp) {
        timestamp = Number(stamp[1]);
        continue;
      }
      const prefixed = /^(?:v[0-9]+[a-z]*|sha1|sha256|sha512)=(.+)$/i.exec(part);
      signatures.push(prefixed ? prefixed[1] : part);
    }
  }
  return { signatures, ...(timestamp !== undefined && { timestamp }) };
}

function headerTimestamp(headers: IncomingHttpHeaders, own: string | undefined): number | undefined {
  for (const name of own ? [own.toLowerCase(), ...TIMESTAMP_HEADERS] : TIMESTAMP_HEADERS) {
    const value = headerValue(headers, name)?.trim();
    if (value && /^[0-9]{1,12}$/.test(value)) return Number(value);
  }
  return undefined;
}

function encodingOf(signature: string | undefined): SignatureDiagnostics['encodingLooksLike'] {
  if (!signature) return 'other';
  if (/^[0-9a-f]+$/i.test(signature) && signature.length % 2 === 0) return 'hex';
  if (/^[A-Za-z0-9+/]+={0,2}$/.test(signature) || /^[A-Za-z0-9_-]+={0,2}$/.test(signature)) return 'base64';
  return 'other';
}
