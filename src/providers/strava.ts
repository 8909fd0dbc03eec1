import { z } from 'zod';
import { idText, joinKind, text } from './body';
import type { Provider } from './provider';
import { urlToken, urlTokenPrecheck } from './schemes/url-token';
import { secretMatches } from '../security';

const optionsSchema = z.strictObject({ verifyToken: z.string().min(1).max(256) });

/** What Strava's hub.challenge looks like; anything else is not echoed (contract §10.D). */
const CHALLENGE = /^[A-Za-z0-9_.-]{1,256}$/;

/**
 * Strava webhook events (Subscriptions API): the subscription check is
 * GET ?hub.mode=subscribe&hub.challenge=…&hub.verify_token=…, answered `{"hub.challenge"}`
 * when the verify token equals options.verifyToken (403 otherwise); events are unsigned POSTs,
 * so the callback URL carries the trigger's token (src/providers/schemes/url-token.ts).
 */
export const strava: Provider = {
  name: 'strava',
  title: 'Strava (webhook events)',
  verifies: 'none from Strava (unsigned): the query parameter token of the registered callback URL equals the secret (constant time); GET hub.verify_token checked against options.verifyToken',
  deliveryIdSource: 'none from Strava: synthesized from subscription_id, object_type, object_id, aspect_type and event_time',
  family: 'token',
  authenticates: 'sender',
  optionsSchema: optionsSchema as unknown as z.ZodType<Record<string, unknown>>,
  signatureHeaders: () => [],
  precheck: urlTokenPrecheck,
  verify: (request) => urlToken(request),
  handshake: {
    method: 'GET',
    signed: false,
    describe: 'GET ?hub.mode=subscribe&hub.challenge=…&hub.verify_token=… (and ?token=<secret>): 200 {"hub.challenge"} when the token equals options.verifyToken, else 403',
    answer({ query, secrets, options }) {
      if (!Object.keys(query).some((name) => name.startsWith('hub.'))) return undefined;
      const checked = urlToken({ query, secrets: secrets ?? [] });
      if (!checked.ok) return checked.reason === 'signature_missing' ? 'signature_missing' : 'signature_invalid';
      const challenge = query['hub.challenge'];
      const token = query['hub.verify_token'];
      if (query['hub.mode'] !== 'subscribe' || typeof challenge !== 'string' || typeof token !== 'string') return 'invalid';
      // Stored as its hash (src/providers/trigger-field.ts), as Meta's.
      const hash = options.verifyTokenHash;
      if (typeof hash !== 'string' || !secretMatches(token, hash)) return 'forbidden';
      if (!CHALLENGE.test(challenge)) return 'invalid';
      return { status: 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ 'hub.challenge': challenge }) };
    },
  },
  kind: (_headers, body) => joinKind(text(body, 'object_type'), text(body, 'aspect_type')),
  deliveryId(_headers, body) {
    const parts = ['subscription_id', 'object_type', 'object_id', 'aspect_type', 'event_time'].map((name) => idText(body, name));
    if (parts.some((part) => part === undefined)) return undefined;
    return `strava:${parts.join(':')}`;
  },
};
