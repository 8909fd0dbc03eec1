import type { ChannelSender } from '../providers/channel-gate';
import { checkSenderBodyType } from '../providers/body-type';
import type { EventTrace } from '../http/context';
import { acceptChatEvents, mapDelivery, type ChatAck } from './accept-chat';
import { parseJsonBytes } from '../body/text';
import type { IngestDeps } from './ports';

export interface ChannelDelivery {
  sender: ChannelSender;
  /** The body exactly as received, already verified by the channel's gate. */
  raw: Buffer;
  contentType: string | undefined;
  /** The public URL the sender called (Twilio's JSON variant names its body hash there). */
  url: string;
  /** The parsed delivery's kind, derived by the sender's preset as on a trigger (contract §10), for the delivery log. */
  noteKind?: (payload: unknown) => void;
  /** Only to correlate log lines with the access log. */
  requestId?: string;
  trace?: EventTrace;
}

/** Contract §3/§11 for a verified channel delivery: parse → the sender's pure mapping → the shared chat accept path. */
export async function acceptChannelDelivery(deps: IngestDeps, delivery: ChannelDelivery): Promise<ChatAck> {
  const { sender, raw } = delivery;
  const { chat, ref } = sender;
  checkSenderBodyType(sender.provider, raw, delivery.contentType, delivery.url);
  const payload = chat.parse ? chat.parse(raw, { url: delivery.url, maxFields: deps.config.MAX_FIELDS }) : parseJsonBytes(raw);
  delivery.noteKind?.(payload);
  const mapping = mapDelivery(chat.describes, () => chat.map(payload, ref));
  return acceptChatEvents(deps, {
    provider: chat.channel,
    channelId: ref.channelId,
    scope: { keyPrefix: chat.dedupePrefix, workspaceId: ref.workspaceId, ...(ref.identity !== undefined && { identity: ref.identity }) },
    mapping,
    requestId: delivery.requestId,
    trace: delivery.trace,
  });
}
