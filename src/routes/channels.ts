import { Router, type Request, type Response } from 'express';
import type { AppDeps } from '../app-deps';
import { contextOf } from '../http/context';
import { logTarget } from '../delivery-log/delivery-log';
import { noteDelivery } from '../http/delivery-notes';
import { Refusal } from '../outcomes/refusal';
import { sendJson } from '../http/send-json';
import { ackOutcome, type ChatAck } from '../ingest/accept-chat';
import { acceptChannelDelivery } from '../ingest/accept-channel';
import { admit } from '../ingress/pipeline';
import { channelGate, channelHandshake, channelSender, type ChannelSender } from '../providers/channel-gate';
import { CHAT_SENDERS, chatSenderOf } from '../providers/channels';
import type { StoredChannel } from '../registry/schemas';
import { senderBodyLimit } from './body-limit';
import { channelBuckets, findChannel } from './channel-lookup';
import { ingressGate } from './http-gate';
import { providerRequest, sendReply } from './provider-replies';

type ChannelProvider = StoredChannel['provider'];

/**
 * GET|POST /api/channels/{provider}/{channelId} (contract §3, §11): the channel's sender checks
 * the delivery exactly as a trigger with that provider would (src/providers/channel-gate.ts).
 */
export function channelRoutes(deps: AppDeps): Router {
  const router = Router();
  // One route per sender with a chat side, under its channel name.
  for (const { chat } of CHAT_SENDERS) router.all(`/api/channels/${chat.channel}/:channelId`, (req, res) => channelRoute(deps, chat.channel, req, res));
  return router;
}

async function channelRoute(deps: AppDeps, name: string, req: Request, res: Response): Promise<void> {
  contextOf(res).route = name;
  const shakesHands = chatSenderOf(name)?.handshake?.method === 'GET';
  const channelId = req.params.channelId as string;
  if (req.method !== 'POST' && !(req.method === 'GET' && shakesHands)) {
    // The same 405 for any id (no probing); a registered channel's log still shows it (contract §13).
    await findChannel(deps, name as ChannelProvider, channelId).then(
      (channel) => noteDelivery(res, { target: logTarget('channel', channelId, channel) }),
      () => undefined,
    );
    const allow = shakesHands ? ['GET', 'POST'] : ['POST'];
    throw new Refusal('method_not_allowed', `only ${allow.join(', ')} is accepted`, undefined, { allow });
  }
  const channel = await findChannel(deps, name as ChannelProvider, channelId);
  noteDelivery(res, { target: logTarget('channel', channelId, channel) });
  const sender = channelSender(channelId, channel);
  const gate = ingressGate(deps, req, res, { target: `channel:${name}:${channelId}`, workspaceId: channel.workspaceId });
  const buckets = channelBuckets(deps.config, channelId, channel);
  const request = providerRequest(req, deps);

  if (req.method === 'GET') {
    const { reply } = await admit(gate, { buckets, handshake: () => channelHandshake(sender, request) });
    return sendReply(res, reply);
  }

  const provider = channelGate(sender, request, deps.metrics);
  const admitted = await admit(gate, {
    buckets,
    bodyLimit: senderBodyLimit(deps.config, sender.provider),
    contentType: req.headers['content-type'],
    checkHeaders: () => provider.beforeBody(),
    checkBody: (raw) => provider.afterBody(raw),
    diagnose: (raw) => provider.diagnose(raw),
    accept: (raw) =>
      acceptChannelDelivery(deps, {
        sender,
        raw,
        contentType: req.headers['content-type'],
        url: request.url,
        noteKind: (payload) => noteDelivery(res, { kind: provider.kindOf(req.headers, payload) }),
        requestId: contextOf(res).requestId,
        trace: contextOf(res).trace,
      }),
  });
  if ('reply' in admitted) return sendReply(res, admitted.reply);
  sendAck(res, sender, admitted.result);
}

/** Twilio reads empty TwiML; Meta and Telegram ignore the body, and the counts help whoever replays a delivery by hand. */
function sendAck(res: Response, sender: ChannelSender, ack: ChatAck): void {
  contextOf(res).outcome = ackOutcome(ack);
  if (sender.provider.acknowledgement === 'twiml') {
    res.status(200).type('text/xml').send('<Response></Response>');
    return;
  }
  // Telegram reads a JSON answer as a Bot API call only when it has a `method`; this has none.
  sendJson(res, 200, ack);
}
