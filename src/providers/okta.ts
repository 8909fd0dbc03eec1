import { z } from 'zod';
import { field, idText, joinKind, text } from './body';
import type { Provider } from './provider';
import { header } from './schemes/signing';
import { checkToken, tokenScheme } from './schemes/token-check';

const headerName = z.string().regex(/^[A-Za-z0-9-]{1,64}$/, 'a header name').transform((name) => name.toLowerCase());
const optionsSchema = z.strictObject({ header: headerName.optional() });

/** Where Okta sends the trigger's token: the event hook's authentication header, whole value (default Authorization). */
const tokenHeader = (options: Record<string, unknown>) => (typeof options.header === 'string' ? options.header : 'authorization');
const scheme = (options: Record<string, unknown>) => tokenScheme(tokenHeader(options));

/** What Okta's one-time verification values look like; anything else is not echoed (contract §10.D). */
const CHALLENGE = /^[A-Za-z0-9_-]{1,256}$/;

/**
 * Okta event hooks (contract §10.D): a static token in a header the hook names, the same on the
 * one-time GET verification (`X-Okta-Verification-Challenge` → `{"verification"}`) and on every
 * delivery. A token authenticates the sender, not the body.
 */
export const okta: Provider = {
  name: 'okta',
  title: 'Okta event hooks',
  verifies: 'options.header (default Authorization): the whole value equals the secret (constant time); GET X-Okta-Verification-Challenge answered with the same token check',
  deliveryIdSource: 'body eventId (unsigned: backed by the body claim)',
  family: 'token',
  authenticates: 'sender',
  optionsSchema: optionsSchema as unknown as z.ZodType<Record<string, unknown>>,
  signatureHeaders: (options) => [tokenHeader(options)],
  precheck: (head) => scheme(head.options).precheck(head),
  verify: (request) => scheme(request.options).verify(request),
  handshake: {
    method: 'GET',
    signed: false,
    describe: 'GET X-Okta-Verification-Challenge with the token: answered 200 {"verification"}',
    answer({ headers, secrets, options }) {
      const challenge = headers && header(headers, 'x-okta-verification-challenge');
      if (!headers || challenge === undefined) return undefined;
      const checked = checkToken(tokenHeader(options), headers, secrets ?? []);
      if (!checked.ok) return checked.reason === 'signature_missing' ? 'signature_missing' : 'signature_invalid';
      if (!CHALLENGE.test(challenge)) return 'invalid';
      return { status: 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ verification: challenge }) };
    },
  },
  kind: (_headers, body) => joinKind(text(field(body, 'data', 'events'), '0', 'eventType')),
  deliveryId: (_headers, body) => idText(body, 'eventId'),
};
