import { Router, type Request } from 'express';
import type { AppDeps } from '../app-deps';
import { noteDelivery } from '../http/delivery-notes';
import { HttpError } from '../http/errors';
import { ackOutcome } from '../ingest/accept-chat';
import { acceptTwilio, EMPTY_TWIML, readTwilioCallback } from '../ingest/accept-twilio';
import { channelBuckets, findChannel } from './channel-lookup';
import { channelDiagnostics, diagnosed } from './delivery-diagnostics';
import { ingressGate } from './ingress-gate';

/** POST /api/channels/twilio/{channelId} (contract §11): Twilio Messaging webhooks, SMS and WhatsApp. */
export function twilioRoutes(deps: AppDeps): Router {
  const router = Router();
  router.all('/api/channels/twilio/:channelId', async (req, res) => {
    res.locals.route = 'twilio';
    if (req.method !== 'POST') {
      throw new HttpError('method_not_allowed', 'only POST is accepted', undefined, { Allow: 'POST' });
    }
    const channelId = req.params.channelId as string;
    const channel = await findChannel(deps, 'twilio', channelId);
    noteDelivery(res, { target: { kind: 'channel', id: channelId } });
    const gate = ingressGate(deps, req, res, { target: `channel:twilio:${channelId}`, workspaceId: channel.workspaceId });
    const signature = req.get('x-twilio-signature');
    // Without a signature there is nothing to check the body against: refused before it is read.
    const diagnose = (raw?: Buffer) => () => channelDiagnostics('twilio', 'x-twilio-signature', req.headers, raw);
    await diagnosed(res, diagnose(), () =>
      gate.verify(() => {
        if (!signature) throw new HttpError('signature_missing', 'missing X-Twilio-Signature');
      }),
    );

    const { config } = deps;
    const raw = await gate.readBody(config.MAX_BODY_BYTES);
    noteDelivery(res, { bytes: raw.length });
    const fields = await diagnosed(res, diagnose(raw), () =>
      gate.verify(() =>
        readTwilioCallback(
          { raw, contentType: req.get('content-type'), url: requestedUrl(req, config.PUBLIC_BASE_URL), signature: signature! },
          channel.authToken,
          config.MAX_FIELDS,
        ),
      ),
    );
    // Only a verified callback spends quota.
    await gate.charge(channelBuckets(config, channelId, channel));
    const ack = await acceptTwilio(deps, { channelId, channel, fields, requestId: res.locals.requestId, trace: res.locals.trace });
    res.locals.outcome = ackOutcome(ack);
    res.status(200).type('text/xml').send(EMPTY_TWIML);
  });
  return router;
}

/**
 * The URL Twilio requested, which it signed: behind a proxy only PUBLIC_BASE_URL knows the
 * public origin; the path and query are taken as they arrived, byte for byte.
 */
function requestedUrl(req: Request, publicBaseUrl: string | undefined): string {
  const origin = publicBaseUrl ? publicBaseUrl.replace(/\/+$/, '') : `${req.protocol}://${req.get('host') ?? ''}`;
  return origin + req.originalUrl;
}
