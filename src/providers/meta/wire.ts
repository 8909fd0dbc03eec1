/** Meta's signature header: `sha256=` and the hex HMAC-SHA256 of the raw body. */
export const META_SIGNATURE_HEADER = 'x-hub-signature-256';

/**
 * The challenge is reflected verbatim, so only a short token is echoed, on every route (§3, §10):
 * Meta sends a number, and reflecting arbitrary text from a query string (even as text/plain)
 * invites reflected XSS through content sniffing or a proxy that rewrites the type.
 */
export const SAFE_CHALLENGE = /^[A-Za-z0-9_.-]{1,256}$/;
