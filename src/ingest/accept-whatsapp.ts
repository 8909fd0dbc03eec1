import { mapWhatsAppPayload } from '../channels/whatsapp/map';
import { verifyWhatsAppSignature } from '../channels/whatsapp/signature';
import { HttpError } from '../http/errors';
import type { WhatsAppChannel } from '../registry/schemas';
import { acceptChatEvents, mapDelivery, type ChatAck } from './accept-chat';
import { parseJsonBytes } from './parse-body';
import type { IngestDeps } from './ports';
import type { EventTrace } from '../tracing/w3c';

export interface WhatsAppDelivery {
  channelId: string;
  channel: WhatsAppChannel;
  /** The body exactly as received: the signature covers these bytes. */
  raw: Buffer;
  /** `X-Hub-Signature-256`. */
  signature: string | undefined;
  /** Only to correlate log lines with the access log. */
  requestId?: string;
  trace?: EventTrace;
}

/**
 * Contract §3 POST for a known channel: signature on the raw bytes → parse → map → the shared
 * chat accept path. Throws HttpError 400/401/413/503.
 */
export async function acceptWhatsApp(deps: IngestDeps, delivery: WhatsAppDelivery): Promise<ChatAck> {
  const { channelId, channel, raw } = delivery;
  if (!verifyWhatsAppSignature(raw, delivery.signature, channel.appSecret)) {
    throw new HttpError(delivery.signature ? 'signature_invalid' : 'signature_missing', 'missing or invalid X-Hub-Signature-256');
  }
  const payload = parseJsonBytes(raw);
  const mapping = mapDelivery('WhatsApp Cloud API webhook body', () =>
    mapWhatsAppPayload(payload, {
      channelId,
      workspaceId: channel.workspaceId,
      inboxId: channel.inboxId,
      phoneNumberId: channel.phoneNumberId,
    }),
  );
  return acceptChatEvents(deps, { provider: 'whatsapp', channelId, mapping, requestId: delivery.requestId, trace: delivery.trace });
}
