import { Router } from 'express';
import type { AppDeps } from '../app-deps';
import { TELEGRAM_SECRET_HEADER, telegramSecretMatches } from '../channels/telegram/secret';
import { noteDelivery } from '../http/delivery-notes';
import { HttpError } from '../http/errors';
import { sendJson } from '../http/send-json';
import { ackOutcome } from '../ingest/accept-chat';
import { acceptTelegram } from '../ingest/accept-telegram';
import { channelBuckets, findChannel } from './channel-lookup';
import { channelDiagnostics, diagnosed } from './delivery-diagnostics';
import { ingressGate } from './ingress-gate';

/** POST /api/channels/telegram/{channelId} (contract §11): a Telegram bot's webhook. */
export function telegramRoutes(deps: AppDeps): Router {
  const router = Router();
  router.all('/api/channels/telegram/:channelId', async (req, res) => {
    res.locals.route = 'telegram';
    if (req.method !== 'POST') {
      throw new HttpError('method_not_allowed', 'only POST is accepted', undefined, { Allow: 'POST' });
    }
    const channelId = req.params.channelId as string;
    const channel = await findChannel(deps, 'telegram', channelId);
    noteDelivery(res, { target: { kind: 'channel', id: channelId } });

    const gate = ingressGate(deps, req, res, { target: `channel:telegram:${channelId}`, workspaceId: channel.workspaceId });

    // Before the body is read and before any quota is spent: a forger costs one header compare.
    const diagnose = () => channelDiagnostics('telegram', TELEGRAM_SECRET_HEADER, req.headers);
    await diagnosed(res, diagnose, () =>
      gate.verifyThenCharge(() => {
        const presented = req.get(TELEGRAM_SECRET_HEADER);
        if (!telegramSecretMatches(presented, channel.secretToken)) {
          throw new HttpError(presented ? 'signature_invalid' : 'signature_missing', `missing or invalid ${TELEGRAM_SECRET_HEADER}`);
        }
      }, channelBuckets(deps.config, channelId, channel)),
    );
    const raw = await gate.readBody(deps.config.MAX_BODY_BYTES);
    noteDelivery(res, { bytes: raw.length });
    gate.reserveParseMemory(raw, 'application/json');
    const ack = await acceptTelegram(deps, { channelId, channel, raw, requestId: res.locals.requestId, trace: res.locals.trace });
    res.locals.outcome = ackOutcome(ack);
    // Telegram reads a JSON answer as a Bot API call only when it has a `method`; this has none.
    sendJson(res, 200, ack);
  });
  return router;
}
