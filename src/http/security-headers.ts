import type { RequestHandler } from 'express';
import helmet from 'helmet';

export type Header = [name: string, value: string];

/**
 * helmet's headers, computed once: none of them depends on the request (no CSP nonce), so
 * helmet runs at start-up against a recording response and each request gets the recorded
 * list. Running helmet's eleven middlewares per request cost about a tenth of the
 * embedded gateway's CPU.
 */
export function securityHeaders(): Header[] {
  return recordHeaders(helmetMiddleware());
}

/**
 * The public listener's headers: its callers are webhook senders and chat platforms, not
 * browsers, so helmet's browser headers (frame, opener, referrer, DNS prefetch, HSTS…) are
 * left to the admin listener. An answer is still never sniffed nor cached. Eleven headers
 * fewer per answer was about a twentieth of the embedded gateway's CPU.
 */
export function machineHeaders(): Header[] {
  return [
    ['X-Content-Type-Options', 'nosniff'],
    ['Cache-Control', 'no-store'],
  ];
}

/** helmet as configured for this API: no CSP and no COEP (it serves JSON, not pages). */
export const helmetMiddleware = () => helmet({ contentSecurityPolicy: false, crossOriginEmbedderPolicy: false });

/** The headers a synchronous, request-independent middleware sets. */
export function recordHeaders(middleware: RequestHandler): Header[] {
  const headers: Header[] = [];
  let called = false;
  const response = {
    setHeader: (name: string, value: string | number | readonly string[]) => void headers.push([name, String(value)]),
    removeHeader: () => undefined,
  };
  middleware({ headers: {} } as never, response as never, () => (called = true));
  if (!called) throw new Error('the security headers middleware did not finish synchronously');
  return headers;
}
