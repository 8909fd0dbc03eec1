import { createHash } from 'node:crypto';
import { z } from 'zod';
import { idText, text, UNKNOWN_KIND } from './body';
import type { Provider } from './provider';
import { header, refused } from './schemes/signing';

const optionsSchema = z.strictObject({
  /** The endpoint exactly as registered with eBay: it is part of the challenge's hash. */
  endpointUrl: z.string().url().max(2048).refine((url) => url.startsWith('https://'), 'an https URL'),
});

/** What eBay's challenge codes look like; anything else is not answered. */
const CHALLENGE = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * eBay marketplace account deletion / event notifications. The endpoint check is
 * GET ?challenge_code=…, answered `{"challengeResponse": sha256 hex(code + verification token + endpoint)}`;
 * the trigger's secret is the verification token (sealed, never shown), options.endpointUrl the
 * endpoint. Deliveries are signed with an ECDSA key fetched by kid from eBay's API with an OAuth
 * client token: the gateway fetches none, so each delivery is refused 503 key_unavailable
 * (never 401, which may disable the endpoint) and nothing is published.
 */
export const ebay: Provider = {
  name: 'ebay',
  title: 'eBay (notifications: endpoint challenge only)',
  verifies: 'GET ?challenge_code answered with sha256(code + verification token (the secret) + options.endpointUrl); X-EBAY-SIGNATURE needs a key from eBay\'s OAuth API, which the gateway does not fetch: deliveries are refused 503 key_unavailable',
  deliveryIdSource: 'body notification.notificationId (never reached: deliveries are refused)',
  family: 'ecdsa',
  authenticates: 'body',
  optionsSchema: optionsSchema as unknown as z.ZodType<Record<string, unknown>>,
  signatureHeaders: () => ['x-ebay-signature'],
  precheck: (head) => (header(head.headers, 'x-ebay-signature') === undefined ? 'signature_missing' : undefined),
  verify: () => refused('signature_invalid'),
  verifyFamily: () => ({ ok: false, reason: 'key_unavailable' }),
  handshake: {
    method: 'GET',
    signed: false,
    describe: 'GET ?challenge_code=<1–128 of [A-Za-z0-9_-]> : 200 {"challengeResponse": sha256 hex(code + verification token + options.endpointUrl)}; another code 400',
    answer({ query, secret, options }) {
      const code = query.challenge_code;
      if (code === undefined) return undefined;
      if (typeof code !== 'string' || !CHALLENGE.test(code) || typeof options.endpointUrl !== 'string') return 'invalid';
      const challengeResponse = createHash('sha256').update(code).update(secret).update(options.endpointUrl).digest('hex');
      return { status: 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ challengeResponse }) };
    },
  },
  kind: (_headers, body) => text(body, 'metadata', 'topic') ?? UNKNOWN_KIND,
  deliveryId: (_headers, body) => idText(body, 'notification', 'notificationId'),
};
