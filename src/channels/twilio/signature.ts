import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { parse as parseLegacyQuery, stringify as stringifyLegacyQuery } from 'node:querystring';

/**
 * Twilio's request signature (`X-Twilio-Signature`), computed the way Twilio's own SDKs check
 * it: base64 HMAC-SHA1, keyed with the account's auth token, over the URL Twilio requested
 * followed by every POST parameter sorted by name, each as name + value (a repeated parameter:
 * its distinct values sorted, each as name + value). A JSON body is signed through the URL
 * instead: the URL carries `bodySHA256=<hex SHA-256 of the body>` and no parameters follow.
 */

/** POST parameters by name, every value of a repeated one. */
export type TwilioParams = ReadonlyMap<string, readonly string[]>;

export function computeTwilioSignature(authToken: string, url: string, params: TwilioParams): string {
  const hmac = createHmac('sha1', authToken);
  hmac.update(url, 'utf8');
  for (const name of [...params.keys()].sort()) {
    for (const value of [...new Set(params.get(name))].sort()) hmac.update(name + value, 'utf8');
  }
  return hmac.digest('base64');
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

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  // The expected length is fixed by the algorithm (28 base64 characters), not a secret.
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Checks `X-Twilio-Signature` for a form-encoded request (pass its parameters) or for a JSON
 * body signed through `bodySHA256` (pass no parameters: `verifyTwilioBodyHash` checks the body).
 * Returns false, never throws, on junk input.
 */
export function verifyTwilioSignature(authToken: string, header: string | undefined, url: string, params: TwilioParams): boolean {
  if (typeof header !== 'string' || header.length === 0) return false;
  // An empty key would let anyone compute a valid signature.
  if (typeof authToken !== 'string' || authToken.length === 0) return false;
  return twilioUrlCandidates(url).some((candidate) => sameText(header, computeTwilioSignature(authToken, candidate, params)));
}

/** The `bodySHA256` query parameter of the URL, when it has exactly one. */
export function bodyHashParameter(url: string): string | undefined {
  const q = url.indexOf('?');
  if (q === -1) return undefined;
  const values = new URLSearchParams(url.slice(q + 1)).getAll('bodySHA256');
  return values.length === 1 ? values[0] : undefined;
}

/** The body's SHA-256 equals the URL's `bodySHA256` (hex, as Twilio writes it). */
export function verifyTwilioBodyHash(rawBody: Buffer, url: string): boolean {
  const expected = bodyHashParameter(url);
  if (expected === undefined) return false;
  return sameText(expected.toLowerCase(), createHash('sha256').update(rawBody).digest('hex'));
}
