import { header } from '../schemes/signing';
import type { Handshake } from '../provider';

/** The token shape echoed (as X's CRC tokens); anything else is refused 400 rather than reflected. */
const TOKEN = /^[A-Za-z0-9+/=_-]{1,128}$/;

/**
 * Worldline (Global Collect) endpoint verification: a GET carrying X-GCS-Webhooks-Endpoint-Verification,
 * answered 200 with that value as text/plain; nothing published.
 */
export const worldlineHandshake: Handshake = {
  method: 'GET',
  signed: false,
  describe: 'GET X-GCS-Webhooks-Endpoint-Verification: <1–128 of [A-Za-z0-9+/=_-]> : 200 text/plain echo; another value 400',
  answer({ headers }) {
    const token = headers && header(headers, 'x-gcs-webhooks-endpoint-verification');
    if (token === undefined) return undefined;
    if (!TOKEN.test(token)) return 'invalid';
    return { status: 200, headers: { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' }, body: token };
  },
};
