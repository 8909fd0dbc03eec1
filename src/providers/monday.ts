import { idText, isObject, text, UNKNOWN_KIND } from './body';
import type { Provider } from './provider';
import { urlToken, urlTokenPrecheck } from './schemes/url-token';

/** What monday.com's challenges look like; anything else is not echoed (contract §10.1 C). */
const CHALLENGE = /^[A-Za-z0-9_.-]{1,256}$/;

/**
 * monday.com board webhooks: monday signs neither the URL challenge nor the events (its JWT
 * Authorization is sent only to apps' integration endpoints). So the callback URL carries the
 * trigger's token (`?token=<secret>`, src/providers/schemes/url-token.ts), checked on both; the
 * challenge POST `{"challenge"}` is then echoed as JSON, nothing published.
 */
export const monday: Provider = {
  name: 'monday',
  title: 'monday.com (board webhooks)',
  verifies: 'none from monday.com (unsigned): the query parameter token of the registered webhook URL equals the secret (constant time); the challenge POST is checked the same way',
  deliveryIdSource: 'body event.triggerUuid (unsigned: backed by the body claim)',
  family: 'token',
  authenticates: 'sender',
  signatureHeaders: () => [],
  precheck: urlTokenPrecheck,
  verify: (request) => urlToken(request),
  handshake: {
    // "signed": answered after the URL token check, with the parsed body.
    method: 'POST',
    signed: true,
    describe: 'POST {"challenge"} (with ?token=<secret>): 200 {"challenge"} echoed as JSON; another challenge shape 400',
    answer({ body }) {
      if (!isObject(body) || !Object.hasOwn(body, 'challenge') || Object.hasOwn(body, 'event')) return undefined;
      const challenge = body.challenge;
      if (typeof challenge !== 'string' || !CHALLENGE.test(challenge)) return 'invalid';
      return { status: 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ challenge }) };
    },
  },
  kind: (_headers, body) => text(body, 'event', 'type') ?? UNKNOWN_KIND,
  deliveryId: (_headers, body) => idText(body, 'event', 'triggerUuid'),
};
