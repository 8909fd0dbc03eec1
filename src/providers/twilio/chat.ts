import type { ChatSide } from '../provider';
import { twilioApi, twilioRecord } from './channel';
import { parseTwilioCallback } from './callback';
import { mapTwilioCallback, type TwilioFields } from './map';

/** Twilio Messaging as a chat channel (contract §11): same signature check as the `twilio` preset. */
export const twilioChat: ChatSide = {
  channel: 'twilio',
  dedupePrefix: 'tw',
  record: twilioRecord,
  api: twilioApi,
  describes: 'Twilio Messaging callback',
  credentials(channel) {
    if (channel.provider !== 'twilio') throw new Error(`not a Twilio channel: ${channel.provider}`);
    return { secrets: [channel.authToken], options: {}, identity: channel.accountSid };
  },
  parse: parseTwilioCallback,
  /** The payload is the callback's parameters, one value each. */
  map: (payload, ref) => mapTwilioCallback(payload as TwilioFields, { ...ref, accountSid: ref.identity ?? '' }),
};
