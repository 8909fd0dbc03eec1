import { field, text } from '../body';

/*
 * What names a WhatsApp notification, on the `meta` trigger preset and on the WhatsApp channel
 * alike (contract §3, §10): the message id, or the status id with its status. Both are inside the
 * signed body (contract §5).
 */

export function whatsappMessageKey(message: { id: string }): string {
  return message.id;
}

export function whatsappStatusKey(status: { id: string; status: string }): string {
  return `${status.id}:${status.status}`;
}

/**
 * The channel's dedupe key when a POST carries exactly one WhatsApp message or status and nothing
 * else, so the trigger names it as the channel does; undefined for any other POST (several
 * notifications are one trigger event, which has no single id of Meta's).
 */
export function singleWhatsAppKey(body: unknown): string | undefined {
  const entries = field(body, 'entry');
  if (!Array.isArray(entries) || entries.length !== 1 || field(entries[0], 'messaging') !== undefined) return undefined;
  const changes = field(entries[0], 'changes');
  if (!Array.isArray(changes) || changes.length !== 1) return undefined;
  const value = field(changes[0], 'value');
  const messages = field(value, 'messages') ?? [];
  const statuses = field(value, 'statuses') ?? [];
  if (!Array.isArray(messages) || !Array.isArray(statuses) || messages.length + statuses.length !== 1) return undefined;
  if (messages.length === 1) {
    const id = text(messages[0], 'id');
    return id === undefined ? undefined : whatsappMessageKey({ id });
  }
  const id = text(statuses[0], 'id');
  const status = text(statuses[0], 'status');
  return id === undefined || status === undefined ? undefined : whatsappStatusKey({ id, status });
}
