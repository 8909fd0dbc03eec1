import { createHash, createHmac } from 'node:crypto';
import { parse as parseLegacyQuery, stringify as stringifyLegacyQuery } from 'node:querystring';
import { sameBytes } from '../../security';
import type { SignedRequest, VerifyResult } from '../provider';
import { fromBase64, header, matchAny, refused } from '../schemes/signing';

export const TWILIO_SIGNATURE_HEADER = 'x-twilio-signature';

/**
 * Twilio's request signature (`X-Twilio-Signature`), computed the way Twilio's own SDKs check
 * it: base64 HMAC-SHA1, keyed with the account's auth token, over the URL Twilio requested
 * followed by every POST parameter sorted by name, each as name + value (a repeated parameter:
 * its distinct values sorted, each as name + value). A JSON body is signed through the URL
 * instead: the URL carries `bodySHA256=<hex SHA-256 of the body>` and no parameters follow.
 */

/** POST parameters by name, every value of a repeated one. */
export type TwilioParams = ReadonlyMap<string, readonly string[]>;

function twilioMac(authToken: string, url: string, params: TwilioParams): Buffer {
  const hmac = createHmac('sha1', authToken);
  hmac.update(url, 'utf8');
  for (const name of [...params.keys()].sort()) {
    for (const value of [...new Set(params.get(name))].sort()) hmac.update(name + value, 'utf8');
  }
  return hmac.digest();
}

const URL_PARTS = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)(.*)$/is;

/** The URL with the scheme's default port written out, or without any port. */
function withPort(url: string, port: 'default' | 'none'): string {
  const match = URL_PARTS.exec(url);
  if (!match) return url;
  const [, scheme, authority, rest] = match;
  const at = authority.lastIndexOf('@');
  const userInfo = authority.slice(0, at + 1);
  const hostPort = authority.slice(at + 1);
  // In an IPv6 literal the port's colon comes after the closing bracket.
  const colon = hostPort.indexOf(':', hostPort.lastIndexOf(']') + 1);
  const host = colon === -1 ? hostPort : hostPort.slice(0, colon);
  if (port === 'none') return scheme + userInfo + host + rest;
  if (colon !== -1) return url;
  return scheme + userInfo + host + (scheme.toLowerCase() === 'https://' ? ':443' : ':80') + rest;
}

/** The query re-encoded as Node's legacy querystring does (`'` → `%27`): some Twilio back ends signed that form. */
function withLegacyQuery(url: string): string {
  const q = url.indexOf('?');
  if (q === -1 || q === url.length - 1) return url;
  return `${url.slice(0, q)}?${stringifyLegacyQuery(parseLegacyQuery(url.slice(q + 1)))}`;
}

/**
 * Every form of the URL Twilio may have signed, in the order its SDK tries them: as requested,
 * without and with the default port; then as the WHATWG URL parser normalises it, without and
 * with the port, each also with the legacy query encoding.
 */
export function twilioUrlCandidates(url: string): string[] {
  const candidates = [withPort(url, 'none'), withPort(url, 'default')];
  let normalised: string | undefined;
  try {
    normalised = new URL(url).toString();
  } catch {
    // Not a URL at all: only the forms above can match.
  }
  if (normalised !== undefined) {
    const bare = withPort(normalised, 'none');
    const ported = withPort(normalised, 'default');
    candidates.push(bare, ported, withLegacyQuery(bare), withLegacyQuery(ported));
  }
  return [...new Set(candidates)];
}

/** The `bodySHA256` query parameter of the URL, when it has exactly one. */
export function bodyHashParameter(url: string): string | undefined {
  const q = url.indexOf('?');
  if (q === -1) return undefined;
  const values = new URLSearchParams(url.slice(q + 1)).getAll('bodySHA256');
  return values.length === 1 ? values[0] : undefined;
}

/** The body's SHA-256 equals the URL's `bodySHA256` (hex, as Twilio writes it). */
function bodyHashMatches(rawBody: Buffer, expected: string): boolean {
  const actual = createHash('sha256').update(rawBody).digest('hex');
  return sameBytes(Buffer.from(expected.toLowerCase(), 'utf8'), Buffer.from(actual, 'utf8'));
}

/** A form body's parameters by name, every value of a repeated one (as Twilio signed them). */
export function formParameters(raw: Buffer): Map<string, string[]> {
  const params = new Map<string, string[]>();
  for (const [name, value] of new URLSearchParams(raw.toString('utf8'))) {
    const values = params.get(name);
    if (values) values.push(value);
    else params.set(name, [value]);
  }
  return params;
}

/** Twilio posts forms; a body without a type is checked as one too (then refused 415 by the preset's bodyKind, not 401). */
function isForm(request: SignedRequest): boolean {
  const type = (header(request.headers, 'content-type') ?? '').split(';')[0].trim().toLowerCase();
  return request.raw.length === 0 || type === '' || type === 'application/x-www-form-urlencoded';
}

/** `X-Twilio-Signature` present and shaped as a base64 HMAC-SHA1: checkable before the body is read. */
export function presentedTwilioSignature(headers: SignedRequest['headers']): Buffer | undefined {
  const value = header(headers, TWILIO_SIGNATURE_HEADER);
  const bytes = value === undefined ? undefined : fromBase64(value);
  return bytes?.length === 20 ? bytes : undefined;
}

/**
 * The whole check, the same on the trigger preset and the channel route: a form body is verified
 * with its parameters; a body whose URL carries `bodySHA256` (the JSON variant) with the URL
 * alone and the body's hash. Any other non-empty body is refused: the signature would cover the
 * URL alone, not the body. Each URL form of `twilioUrlCandidates` and each secret is tried.
 */
export function verifyTwilio(request: SignedRequest): VerifyResult {
  const presented = presentedTwilioSignature(request.headers);
  if (!presented) return refused('signature_missing');
  const bodyHash = bodyHashParameter(request.url);
  if (bodyHash !== undefined) {
    if (!bodyHashMatches(request.raw, bodyHash)) return refused('signature_invalid');
    return signedUrlMatch(request.secrets, presented, request.url, new Map());
  }
  if (!isForm(request)) return refused('signature_invalid');
  return signedUrlMatch(request.secrets, presented, request.url, formParameters(request.raw));
}

function signedUrlMatch(secrets: readonly string[], presented: Buffer, url: string, params: TwilioParams): VerifyResult {
  // An empty key would let anyone compute a valid signature.
  const keys = secrets.filter((secret) => secret.length > 0);
  for (const candidate of twilioUrlCandidates(url)) {
    const result = matchAny(keys, [presented], (secret) => twilioMac(secret, candidate, params));
    if (result.ok) return result;
  }
  return refused('signature_invalid');
}
