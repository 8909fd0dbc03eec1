import { mapTelegramUpdate } from '../channels/telegram/map';
import type { TelegramChannel } from '../registry/schemas';
import { acceptChatEvents, mapDelivery, type ChatAck } from './accept-chat';
import { parseJsonBytes } from './parse-body';
import type { IngestDeps } from './ports';
import type { EventTrace } from '../tracing/w3c';

export interface TelegramDelivery {
  channelId: string;
  channel: TelegramChannel;
  /** The body as received; its secret header was checked before it was read. */
  raw: Buffer;
  requestId?: string;
  trace?: EventTrace;
}

/** Contract §11 Telegram POST, secret already checked: parse → map → the shared chat accept path. */
export async function acceptTelegram(deps: IngestDeps, delivery: TelegramDelivery): Promise<ChatAck> {
  const { channelId, channel } = delivery;
  const payload = parseJsonBytes(delivery.raw);
  const mapping = mapDelivery('Telegram Bot API update', () =>
    mapTelegramUpdate(payload, { channelId, workspaceId: channel.workspaceId, inboxId: channel.inboxId }),
  );
  return acceptChatEvents(deps, { provider: 'telegram', channelId, mapping, requestId: delivery.requestId, trace: delivery.trace });
}
