import type { ChannelForeignMetric } from '../observability/metrics';
import type { ChatSide, Provider } from './provider';
import { PROVIDERS } from './registry';

/** A sender with a chat side: a channel (contract §3, §11). */
export type ChatSender = Provider & { chat: ChatSide };

/**
 * Every channel, derived from PROVIDERS: the channel routes, the channel record union, the
 * sealed fields, the route table and the OpenAPI document are built from this list. Ordered
 * by channel name, descending (whatsapp, twilio, telegram): the order docs/openapi.json has
 * always listed them in, kept so the document did not change when the list was derived.
 */
export const CHAT_SENDERS: readonly ChatSender[] = chatSenders(PROVIDERS);

export function chatSenders(providers: readonly Provider[]): ChatSender[] {
  return providers
    .filter((provider): provider is ChatSender => provider.chat !== undefined)
    .sort((a, b) => (a.chat.channel < b.chat.channel ? 1 : a.chat.channel > b.chat.channel ? -1 : 0));
}

/** The sender of this channel name, if any. */
export function chatSenderOf(channel: string): ChatSender | undefined {
  return CHAT_SENDERS.find((sender) => sender.chat.channel === channel);
}

/** The counters the channel modules declare for items addressed to someone else (createMetrics takes them). */
export const CHANNEL_FOREIGN_METRICS: readonly ChannelForeignMetric[] = CHAT_SENDERS.flatMap(({ chat }) =>
  chat.foreignMetric ? [{ channel: chat.channel, ...chat.foreignMetric }] : [],
);
