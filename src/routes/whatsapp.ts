import { Router, type Request } from 'express';
import type { AppDeps } from '../app-deps';
import { HttpError } from '../http/errors';
import { acceptWhatsApp } from '../ingest/accept-whatsapp';
import { readRawBody } from '../ingest/read-body';
import { CHANNEL_ID_PATTERN, type StoredChannel } from '../registry/schemas';
import { secretMatches } from '../security';
import { lookup } from './lookup';

/**
 * The challenge is reflected verbatim, so only a short token is echoed: Meta sends a number,
 * and reflecting arbitrary text from a query string (even as text/plain) invites reflected
 * XSS through content sniffing or a proxy that rewrites the type.
 */
const SAFE_CHALLENGE = /^[A-Za-z0-9_.-]{1,256}$/;

/** GET|POST /api/channels/whatsapp/{channelId} (contract §3). */
export function whatsappRoutes(deps: AppDeps): Router {
  const router = Router();
  router.all('/api/channels/whatsapp/:channelId', async (req, res) => {
    res.locals.route = 'whatsapp';
    if (req.method !== 'GET' && req.method !== 'POST') {
      throw new HttpError('METHOD_NOT_ALLOWED', 'only GET and POST are accepted', undefined, { Allow: 'GET, POST' });
    }
    const channelId = req.params.channelId as string;
    const channel = CHANNEL_ID_PATTERN.test(channelId)
      ? await lookup(deps.registry.channels, channelId)
      : undefined;
    if (!channel) throw new HttpError('NOT_FOUND', 'no such channel');

    const { config } = deps;
    // GET is limited too: it throttles guessing of the verify token.
    await deps.enforceRateLimits(req, res, [
      { kind: 'channel', id: channelId, ...config.RATE_LIMIT_DEFAULT },
      { kind: 'workspace', id: channel.workspaceId, ...config.RATE_LIMIT_WORKSPACE },
    ]);

    if (req.method === 'GET') {
      const challenge = verifySubscription(req, channel);
      res.locals.outcome = 'ok';
      res.status(200).type('text/plain; charset=utf-8').send(challenge);
      return;
    }

    const raw = await readRawBody(req, res, config.WHATSAPP_MAX_BODY_BYTES, deps.bodyBudget);
    const ack = await acceptWhatsApp(deps, {
      channelId,
      channel,
      raw,
      signature: req.get('x-hub-signature-256'),
      requestId: res.locals.requestId,
    });
    res.locals.outcome = ack.published === 0 && ack.duplicates > 0 ? 'duplicate' : 'accepted';
    // Meta ignores the body; the counts help whoever replays a delivery by hand.
    res.status(200).json(ack);
  });
  return router;
}

/** The subscription handshake; returns the challenge to echo. Never logs the token. */
function verifySubscription(req: Request, channel: StoredChannel): string {
  const mode = req.query['hub.mode'];
  const token = req.query['hub.verify_token'];
  const challenge = req.query['hub.challenge'];
  if (mode !== 'subscribe' || typeof token !== 'string' || typeof challenge !== 'string') {
    throw new HttpError('BAD_REQUEST', 'expected hub.mode=subscribe, hub.verify_token and hub.challenge');
  }
  if (!secretMatches(token, channel.verifyTokenHash)) {
    throw new HttpError('FORBIDDEN', 'the verify token does not match');
  }
  if (!SAFE_CHALLENGE.test(challenge)) {
    throw new HttpError('BAD_REQUEST', 'hub.challenge must be 1-256 of [A-Za-z0-9_.-]');
  }
  return challenge;
}
