import { field } from '../body';
import type { Handshake } from '../provider';

/**
 * Xero's "intent to receive": signed POSTs whose `events` is empty, some with a bad signature
 * on purpose. The signature check before this answers 401 to those; a valid one gets 200 with an
 * empty body, and nothing is published (there is no event in it).
 */
export const xeroHandshake: Handshake = {
  method: 'POST',
  signed: true,
  describe: 'intent to receive (signed POST, events: []): 200 with an empty body for a valid signature (401 otherwise); nothing published',
  answer({ body }) {
    const events = field(body, 'events');
    return Array.isArray(events) && events.length === 0 ? { status: 200, headers: {}, body: '' } : undefined;
  },
};
