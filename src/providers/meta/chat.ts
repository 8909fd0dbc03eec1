import type { ChatSide } from '../provider';
import { whatsAppApi, whatsAppRecord } from './channel';
import { mapWhatsAppPayload } from './whatsapp-map';

/** Meta's WhatsApp Cloud API as a chat channel (contract §3): same signature and handshake as the `meta` preset. */
export const whatsappChat: ChatSide = {
  channel: 'whatsapp',
  dedupePrefix: 'wa',
  foreignMetric: { name: 'igw_whatsapp_foreign_changes_total', help: "WhatsApp changes for a phone number id that is not the channel's, not published" },
  record: whatsAppRecord,
  api: whatsAppApi,
  describes: 'WhatsApp Cloud API webhook body',
  bodyLimitSetting: 'WHATSAPP_MAX_BODY_BYTES',
  credentials(channel) {
    if (channel.provider !== 'whatsapp') throw new Error(`not a WhatsApp channel: ${channel.provider}`);
    return { secrets: [channel.appSecret], options: { verifyTokenHash: channel.verifyTokenHash }, identity: channel.phoneNumberId };
  },
  map: (payload, ref) => mapWhatsAppPayload(payload, { ...ref, phoneNumberId: ref.identity ?? '' }),
};
