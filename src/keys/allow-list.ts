import { isIP } from 'node:net';

/**
 * Every place a delivery can make the gateway fetch a key (contract §10.1 F), fixed in code: a
 * trigger or an admin cannot add one. A URL is allowed only when it is https on the default
 * port, without userinfo or fragment, on a named host (never an IP literal) and matches the
 * source's own pattern.
 */
export type KeySource =
  | 'aws-sns-certificate'
  | 'aws-sns-subscribe'
  | 'google-oidc'
  | 'google-chat'
  | 'microsoft-identity'
  | 'bot-framework'
  | 'zoho-desk'
  | 'paypal-certificate'
  | 'plaid';

const SNS_HOST = /^sns\.[a-z]{2}(?:-[a-z]+)+-\d\.amazonaws\.com(?:\.cn)?$/;
const SNS_PEM_PATH = /^\/SimpleNotificationService-[0-9a-f]{32}\.pem$/;
const TENANT = /^[A-Za-z0-9.-]{1,100}$/;
const ZOHO_HOSTS = new Set(['desk.zoho.com', 'desk.zoho.eu', 'desk.zoho.in', 'desk.zoho.com.au', 'desk.zoho.jp', 'desk.zoho.com.cn']);
const PAYPAL_HOSTS = new Set(['api.paypal.com', 'api-m.paypal.com', 'api.sandbox.paypal.com', 'api-m.sandbox.paypal.com']);
const PAYPAL_CERT_PATH = /^\/v1\/notifications\/certs\/[A-Za-z0-9._-]{1,200}$/;
const PLAID_HOSTS = new Set(['production.plaid.com', 'sandbox.plaid.com']);

const noQuery = (url: URL) => url.search === '';

/** Host and path (and query, where the source has one) for each source. */
const PATTERNS: Record<KeySource, (url: URL) => boolean> = {
  'aws-sns-certificate': (url) => SNS_HOST.test(url.hostname) && SNS_PEM_PATH.test(url.pathname) && noQuery(url),
  'aws-sns-subscribe': (url) =>
    SNS_HOST.test(url.hostname) && url.pathname === '/' && url.searchParams.getAll('Action').join() === 'ConfirmSubscription',
  'google-oidc': (url) => url.hostname === 'www.googleapis.com' && url.pathname === '/oauth2/v3/certs' && noQuery(url),
  'google-chat': (url) =>
    url.hostname === 'www.googleapis.com' && url.pathname === '/service_accounts/v1/jwk/chat@system.gserviceaccount.com' && noQuery(url),
  'microsoft-identity': (url) => {
    const parts = url.pathname.split('/');
    return (
      url.hostname === 'login.microsoftonline.com' &&
      parts.length === 5 &&
      TENANT.test(parts[1]) &&
      parts.slice(2).join('/') === 'discovery/v2.0/keys' &&
      noQuery(url)
    );
  },
  'bot-framework': (url) => url.hostname === 'login.botframework.com' && url.pathname === '/v1/.well-known/keys' && noQuery(url),
  'zoho-desk': (url) => ZOHO_HOSTS.has(url.hostname) && url.pathname === '/.well-known/jwks.json' && noQuery(url),
  'paypal-certificate': (url) => PAYPAL_HOSTS.has(url.hostname) && PAYPAL_CERT_PATH.test(url.pathname) && noQuery(url),
  plaid: (url) => PLAID_HOSTS.has(url.hostname) && url.pathname === '/webhook_verification_key/get' && noQuery(url),
};

/** The hosts a source may reach, for the catalogue's `fetches` (contract §10.G). */
export const SOURCE_HOSTS: Record<KeySource, readonly string[]> = {
  'aws-sns-certificate': ['sns.<region>.amazonaws.com', 'sns.<region>.amazonaws.com.cn'],
  'aws-sns-subscribe': ['sns.<region>.amazonaws.com', 'sns.<region>.amazonaws.com.cn'],
  'google-oidc': ['www.googleapis.com'],
  'google-chat': ['www.googleapis.com'],
  'microsoft-identity': ['login.microsoftonline.com'],
  'bot-framework': ['login.botframework.com'],
  'zoho-desk': [...ZOHO_HOSTS],
  'paypal-certificate': [...PAYPAL_HOSTS],
  plaid: [...PLAID_HOSTS],
};

/** Longer than any URL of the list: a sender's megabyte of URL is not parsed. */
const MAX_URL_LENGTH = 2048;

/** The parsed URL when `text` is on `source`'s allow-list, else undefined (nothing may be fetched). */
export function allowedKeyUrl(source: KeySource, text: string): URL | undefined {
  if (typeof text !== 'string' || text.length > MAX_URL_LENGTH) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' || url.port !== '' || url.username !== '' || url.password !== '' || url.hash !== '') return undefined;
  // The URL parser already turns 0x7f.1 and friends into dotted quads; brackets mark IPv6.
  if (isIP(url.hostname) !== 0 || url.hostname.startsWith('[')) return undefined;
  // A trailing dot or a percent-encoded host would dodge the exact host names below.
  if (url.hostname.endsWith('.') || text.includes('\\')) return undefined;
  return PATTERNS[source](url) ? url : undefined;
}
