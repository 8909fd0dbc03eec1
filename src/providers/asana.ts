import { sha256Hex } from '../security';
import { z } from 'zod';
import { field, joinKind, text } from './body';
import type { Provider } from './provider';
import { recipeParts } from './recipe/recipe-provider';
import type { Recipe } from './recipe/schema';
import { header } from './schemes/signing';

const DEFAULT_WINDOW_SECONDS = 300;
const optionsSchema = z.strictObject({ handshakeWindowSeconds: z.number().int().min(1).max(3600).optional() });

/** Deliveries: X-Hook-Signature, the hex HMAC-SHA256 of the raw body, keyed by the secret learned in the handshake. */
const RECIPE: Recipe = { signature: { header: 'x-hook-signature', format: 'raw', encoding: 'hex' }, algorithm: 'hmac-sha256', signedContent: '{body}' };
/** What Asana's secrets look like; anything else is not stored nor echoed. */
const SECRET = /^[A-Za-z0-9_.-]{1,256}$/;

const recipe = recipeParts(() => RECIPE);

/**
 * Asana (contract §10.D): the secret is learned from the first `X-Hook-Secret` handshake after
 * the admin PUT that left the trigger without one, inside options.handshakeWindowSeconds; the
 * route stores it sealed before the echo is sent. Any later handshake is refused 403 (re-keying
 * needs an admin PUT).
 */
export const asana: Provider = {
  name: 'asana',
  title: 'Asana (webhooks)',
  verifies: 'X-Hook-Signature: hex HMAC-SHA256 of the raw body, key = the X-Hook-Secret learned in the handshake',
  deliveryIdSource: 'asana:<sha256 hex of the body> (Asana sends no delivery id)',
  family: 'hmac-recipe',
  authenticates: 'body',
  optionsSchema: optionsSchema as unknown as z.ZodType<Record<string, unknown>>,
  ...recipe,
  keys: () => ({ secrets: true, learnsSecret: true }),
  handshake: {
    method: 'POST',
    signed: false,
    describe: 'POST with X-Hook-Secret while the trigger has no secret, within options.handshakeWindowSeconds (default 300) of the admin PUT: 200 with X-Hook-Secret echoed, the secret stored; later: 403',
    answer({ headers, secrets, options, nowSeconds }) {
      const secret = headers && header(headers, 'x-hook-secret');
      if (secret === undefined) return undefined;
      const armedAt = typeof options.handshakeArmedAt === 'number' ? options.handshakeArmedAt : undefined;
      const window = typeof options.handshakeWindowSeconds === 'number' ? options.handshakeWindowSeconds : DEFAULT_WINDOW_SECONDS;
      if ((secrets?.length ?? 0) > 0 || armedAt === undefined || nowSeconds === undefined || nowSeconds - armedAt > window) return 'forbidden';
      if (!SECRET.test(secret)) return 'invalid';
      return { status: 200, headers: { 'X-Hook-Secret': secret }, body: '', learnedSecret: secret };
    },
  },
  signatureHeaders: () => ['x-hook-signature', 'x-hook-secret'],
  kind(_headers, body) {
    const events = field(body, 'events');
    if (Array.isArray(events) && events.length === 0) return 'heartbeat';
    return joinKind(text(body, 'events', '0', 'resource', 'resource_type'), text(body, 'events', '0', 'action'));
  },
  pings: ['heartbeat'],
  deliveryId: (_headers, _body, raw) => (raw ? `asana:${sha256Hex(raw)}` : undefined),
};
