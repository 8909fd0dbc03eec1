import { text } from '../body';
import { header } from '../schemes/signing';
import type { Handshake } from '../provider';

/** What Twitch's challenges look like; anything else is not echoed (contract §10.1 C). */
const CHALLENGE = /^[A-Za-z0-9_.-]{1,256}$/;

/**
 * Twitch EventSub's subscription check: a signed POST whose message type is
 * `webhook_callback_verification`, answered with the challenge as text/plain; nothing published.
 */
export const twitchHandshake: Handshake = {
  method: 'POST',
  signed: true,
  describe: 'webhook_callback_verification (signed POST): answered 200 text/plain with the challenge',
  answer({ headers, body }) {
    if (!headers || header(headers, 'twitch-eventsub-message-type') !== 'webhook_callback_verification') return undefined;
    const challenge = text(body, 'challenge');
    if (challenge === undefined || !CHALLENGE.test(challenge)) return 'invalid';
    return { status: 200, headers: { 'Content-Type': 'text/plain; charset=utf-8' }, body: challenge };
  },
};
