import { Refusal } from '../outcomes/refusal';
import type { Metrics } from '../observability/metrics';
import type { StoredChannel } from './channel-record';
import { handshakeReply, ProviderGate, type ProviderRequest } from './gate';
import type { ChannelRef, ChatSide, Provider, Reply } from './provider';
import { PROVIDERS } from './registry';
import type { StoredProvider } from './trigger-field';

/** A registered chat channel seen as its sender's preset (contract §10 "one sender, one behaviour"). */
export interface ChannelSender {
  provider: Provider;
  chat: ChatSide;
  /** The channel's credentials in the preset's form: what a trigger with this provider would store. */
  stored: StoredProvider;
  ref: ChannelRef;
}

export function channelSender(channelId: string, channel: StoredChannel): ChannelSender {
  const provider = PROVIDERS.find((candidate) => candidate.chat?.channel === channel.provider);
  if (!provider?.chat) throw new Error(`no sender handles ${channel.provider} channels`);
  const { secrets, options, identity } = provider.chat.credentials(channel);
  return {
    provider,
    chat: provider.chat,
    stored: { name: provider.name, secrets, options },
    ref: { channelId, workspaceId: channel.workspaceId, inboxId: channel.inboxId, ...(identity !== undefined && { identity }) },
  };
}

/** The same gate a trigger with this provider runs: header checks before the body, the signature over the raw bytes after. */
export function channelGate(sender: ChannelSender, request: ProviderRequest, metrics: Metrics): ProviderGate {
  return new ProviderGate(sender.provider, sender.stored, request, metrics);
}

/** A GET on a channel: its sender's GET handshake; a GET that is not the handshake is 400 (contract §3). */
export function channelHandshake(sender: ChannelSender, request: ProviderRequest): Reply {
  const handshake = sender.provider.handshake;
  const answer =
    handshake?.method === 'GET'
      ? handshake.answer({ query: request.query, body: undefined, secret: sender.stored.secrets[0], options: sender.stored.options ?? {} })
      : undefined;
  if (answer === undefined) throw new Refusal('invalid_handshake', 'expected the sender\'s subscription handshake (hub.mode=subscribe, hub.verify_token, hub.challenge)');
  return handshakeReply(answer);
}
