import type { Response } from 'express';
import { keepHeader } from '../http/answer-headers';
import { contextOf } from '../http/context';
import { sendJson } from '../http/send-json';
import { ackOutcome, type ChatAck } from '../ingest/accept-chat';
import type { WebhookAck } from '../ingest/accept-webhook';
import type { SuccessOutcome } from '../outcomes/reasons';
import { acknowledgementReply } from '../providers/acknowledgement';
import type { Provider, Reply } from '../providers/provider';

/**
 * Every answer an ingress route sends but a refusal (src/http/errors.ts renders those): a
 * sender's reply (a handshake's, or its acknowledgement), a plain trigger's acknowledgement,
 * a chat channel's.
 */

/** A sender's reply: a handshake's answer, or its acknowledgement of a delivery (src/providers/acknowledgement.ts). */
export function sendReply(res: Response, reply: Reply & { outcome?: SuccessOutcome; eventId?: string }): void {
  const context = contextOf(res);
  context.outcome = reply.outcome ?? 'ok';
  if (reply.headers['X-Event-Id']) context.eventId = reply.headers['X-Event-Id'];
  res.status(reply.status).set(reply.headers);
  if (reply.body === '') res.end();
  else res.send(reply.body);
}

/** A trigger without a provider: contract §2's acknowledgement (or the trigger's `response`), its event id, whether it was a replay. */
export function sendWebhookAck(res: Response, ack: WebhookAck): void {
  const context = contextOf(res);
  context.outcome = ack.replayed ? 'duplicate' : 'accepted';
  context.eventId = ack.eventId;
  keepHeader(res, 'X-Event-Id', ack.eventId);
  if (ack.replayed) keepHeader(res, 'Idempotent-Replayed', 'true');
  sendJson(res, ack.status, ack.body);
}

/** Twilio reads empty TwiML; Meta and Telegram ignore the body, and the counts help whoever replays a delivery by hand. */
export function sendChatAck(res: Response, provider: Provider, ack: ChatAck): void {
  if (provider.acknowledgement === 'twiml') return sendReply(res, { ...acknowledgementReply('twiml', 200, ack), outcome: ackOutcome(ack) });
  contextOf(res).outcome = ackOutcome(ack);
  // Telegram reads a JSON answer as a Bot API call only when it has a `method`; this has none.
  sendJson(res, 200, ack);
}
