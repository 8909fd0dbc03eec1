/*
 * What names one Twilio callback, its kind and its id, on the `twilio` trigger preset and on the
 * Twilio channel alike (contract §10, §11): the signed form parameters only (contract §5), never
 * the unsigned `I-Twilio-Idempotency-Token` header.
 */

/**
 * An inbound message's own status; every other MessageStatus is a status callback, named
 * `message.status.<MessageStatus>` as the catalogue lists it (kinds/twilio.json, which lists
 * `message.status.receiving` and has no `message.status.received`).
 */
const INBOUND_STATUS = 'received';

/** A parameter's value; a repeated one by its first, as the channel reads it (a trigger's form parser collects it into an array). */
function nonEmpty(value: unknown): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' && first !== '' ? first : undefined;
}

/** The message a callback is about: MessageSid, or the legacy SmsMessageSid / SmsSid. */
export function twilioMessageSid(fields: Readonly<Record<string, unknown>>): string | undefined {
  return nonEmpty(fields.MessageSid) ?? nonEmpty(fields.SmsMessageSid) ?? nonEmpty(fields.SmsSid);
}

/** The status a status callback reports; undefined for an inbound message. */
export function twilioCallbackStatus(fields: Readonly<Record<string, unknown>>): string | undefined {
  const status = nonEmpty(fields.MessageStatus);
  return status !== INBOUND_STATUS ? status : undefined;
}

/**
 * `<MessageSid>` for an inbound message, `<MessageSid>:<MessageStatus>` for a status callback
 * (each status of a message is its own event); `<CallSid>:<CallStatus>` for a Voice callback.
 */
export function twilioDeliveryId(fields: Readonly<Record<string, unknown>>): string | undefined {
  const message = twilioMessageSid(fields);
  if (message !== undefined) {
    const status = twilioCallbackStatus(fields);
    return status === undefined ? message : `${message}:${status}`;
  }
  const call = nonEmpty(fields.CallSid);
  return call === undefined ? undefined : `${call}:${nonEmpty(fields.CallStatus) ?? ''}`;
}

/**
 * The catalogue's kind of a callback: `message.status.<MessageStatus>` for a status callback,
 * `call.status.<CallStatus>` for Voice, `message.inbound` for an inbound message. The channel
 * maps the same callback to chat.status / chat.message by the same twilioCallbackStatus.
 */
export function twilioKind(fields: Readonly<Record<string, unknown>>): string {
  const status = twilioCallbackStatus(fields);
  if (status !== undefined) return `message.status.${status}`;
  const call = nonEmpty(fields.CallStatus);
  if (call !== undefined) return `call.status.${call}`;
  return twilioMessageSid(fields) !== undefined ? 'message.inbound' : 'unknown';
}
