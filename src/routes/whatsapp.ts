import { Router, type Request, type Response } from 'express';
import type { AppDeps } from '../app-deps';
import { isWellFormedSignature, verifyWhatsAppSignature } from '../channels/whatsapp/signature';
import { noteDelivery } from '../http/delivery-notes';
import { HttpError } from '../http/errors';
import { sendJson } from '../http/send-json';
import { acceptWhatsApp } from '../ingest/accept-whatsapp';
import type { WhatsAppChannel } from '../registry/schemas';
import { secretMatches } from '../security';
import { channelBuckets, findChannel } from './channel-lookup';
import { channelDiagnostics, diagnosed } from './delivery-diagnostics';
import { ingressGate, type IngressGate } from './ingress-gate';

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
      throw new HttpError('method_not_allowed', 'only GET and POST are accepted', undefined, { Allow: 'GET, POST' });
    }
    const channelId = req.params.channelId as string;
    const channel = await findChannel(deps, 'whatsapp', channelId);
    noteDelivery(res, { target: { kind: 'channel', id: channelId } });
    const gate = ingressGate(deps, req, res, { target: `channel:whatsapp:${channelId}`, workspaceId: channel.workspaceId });
    const buckets = channelBuckets(deps.config, channelId, channel);

    if (req.method === 'GET') {
      const challenge = await gate.verify(() => verifySubscription(req, channel));
      await gate.charge(buckets);
      res.locals.outcome = 'ok';
      res.status(200).type('text/plain; charset=utf-8').send(challenge);
      return;
    }

    const raw = await signedBody(deps, req, res, gate, channel);
    await gate.charge(buckets);
    gate.reserveParseMemory(raw, 'application/json');
    const ack = await acceptWhatsApp(deps, {
      channelId,
      channel,
      raw,
      signature: req.get('x-hub-signature-256'),
      requestId: res.locals.requestId,
      trace: res.locals.trace,
    });
    res.locals.outcome = ack.published === 0 && ack.duplicates > 0 ? 'duplicate' : 'accepted';
    // Meta ignores the body; the counts help whoever replays a delivery by hand.
    sendJson(res, 200, ack);
  });
  return router;
}

/**
 * The body of a POST whose `X-Hub-Signature-256` is right: a missing or malformed header is
 * refused before a byte of the body is read; the HMAC over the raw bytes is checked after,
 * before anything is charged or parsed (acceptWhatsApp checks it again: it trusts no caller).
 */
async function signedBody(deps: AppDeps, req: Request, res: Response, gate: IngressGate, channel: WhatsAppChannel): Promise<Buffer> {
  const signature = req.get('x-hub-signature-256');
  const diagnose = (raw?: Buffer) => () => channelDiagnostics('meta', 'x-hub-signature-256', req.headers, raw);
  await diagnosed(res, diagnose(), () =>
    gate.verify(() => {
      if (!isWellFormedSignature(signature)) throw signatureError('signature_missing');
    }),
  );
  const raw = await gate.readBody(deps.config.WHATSAPP_MAX_BODY_BYTES);
  noteDelivery(res, { bytes: raw.length });
  await diagnosed(res, diagnose(raw), () =>
    gate.verify(() => {
      if (!verifyWhatsAppSignature(raw, signature, channel.appSecret)) throw signatureError('signature_invalid');
    }),
  );
  return raw;
}

function signatureError(reason: 'signature_missing' | 'signature_invalid'): HttpError {
  return new HttpError(reason, 'missing or invalid X-Hub-Signature-256');
}

/** The subscription handshake; returns the challenge to echo. Never logs the token. */
function verifySubscription(req: Request, channel: WhatsAppChannel): string {
  const mode = req.query['hub.mode'];
  const token = req.query['hub.verify_token'];
  const challenge = req.query['hub.challenge'];
  if (mode !== 'subscribe' || typeof token !== 'string' || typeof challenge !== 'string') {
    throw new HttpError('invalid_handshake', 'expected hub.mode=subscribe, hub.verify_token and hub.challenge');
  }
  if (!secretMatches(token, channel.verifyTokenHash)) {
    throw new HttpError('verification_failed', 'the verify token does not match');
  }
  if (!SAFE_CHALLENGE.test(challenge)) {
    throw new HttpError('invalid_handshake', 'hub.challenge must be 1-256 of [A-Za-z0-9_.-]');
  }
  return challenge;
}
