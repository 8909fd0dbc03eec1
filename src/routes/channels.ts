import { Router, type Request, type Response } from 'express';
import type { AppDeps } from '../app-deps';
import { contextOf } from '../http/context';
import { logTarget } from '../delivery-log/delivery-log';
import { noteDelivery } from '../http/delivery-notes';
import { methodNotAllowed } from '../outcomes/refusal';
import { acceptChannelDelivery } from '../ingest/accept-channel';
import { admit } from '../ingress/pipeline';
import { channelGate, channelHandshake, channelSender } from '../providers/channel-gate';
import { CHAT_SENDERS, chatSenderOf } from '../providers/channels';
import type { StoredChannel } from '../registry/schemas';
import { senderBodyLimit } from './body-limit';
import { channelBuckets, findChannel } from './channel-lookup';
import { ingressGate } from './http-gate';
import { sendChatAck, sendReply } from './answers';
import { providerRequest } from './provider-replies';

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
    throw methodNotAllowed(shakesHands ? ['GET', 'POST'] : ['POST']);
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
  sendChatAck(res, sender.provider, admitted.result);
}
