import { ADYEN_ACKNOWLEDGEMENT } from './families/adyen';
import type { Acknowledgement, Reply } from './provider';

/**
 * A sender's acknowledgement as the reply the route sends (src/routes/answers.ts): Slack an
 * empty 200, Twilio empty TwiML, Discord a deferred interaction, Adyen `[accepted]`, others the
 * JSON body of contract §2. Written once, for trigger and channel routes alike.
 */
export function acknowledgementReply(acknowledgement: Acknowledgement | undefined, status: number, body: unknown, eventId?: string): Reply {
  switch (acknowledgement) {
    case 'empty':
      return { status, headers: {}, body: '' };
    case 'no-content':
      return { status: 204, headers: {}, body: '' };
    case 'deferred-interaction':
      // Discord answers an interaction from this body: deferred (type 5) unless the trigger's `response` says otherwise.
      if (eventId !== undefined && isDefaultAcknowledgement(body, eventId)) {
        return { status: 200, headers: { 'Content-Type': 'application/json; charset=utf-8' }, body: '{"type":5}' };
      }
      return { status, headers: { 'Content-Type': 'application/json; charset=utf-8' }, body: JSON.stringify(body) };
    case 'accepted-text':
      return { status, headers: { 'Content-Type': 'text/plain; charset=utf-8' }, body: ADYEN_ACKNOWLEDGEMENT };
    case 'twiml':
      return { status, headers: { 'Content-Type': 'text/xml; charset=utf-8' }, body: '<Response></Response>' };
    default:
      return { status, headers: { 'Content-Type': 'application/json; charset=utf-8' }, body: JSON.stringify(body) };
  }
}

/** The acknowledgement of contract §2 (no `response` on the trigger): `{ message: "Webhook processed", eventId }`. */
function isDefaultAcknowledgement(body: unknown, eventId: string): boolean {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return false;
  const entries = Object.entries(body);
  return entries.length === 2 && (body as Record<string, unknown>).message === 'Webhook processed' && (body as Record<string, unknown>).eventId === eventId;
}
