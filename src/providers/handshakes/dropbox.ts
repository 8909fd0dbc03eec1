import { plainTextEcho } from '../echo';
import type { Handshake } from '../provider';

/** Dropbox's endpoint check: GET ?challenge=… echoed as text that no browser sniffs into HTML. */
export const dropboxHandshake: Handshake = {
  method: 'GET',
  signed: false,
  describe: 'GET ?challenge=… : 200 text/plain echo with X-Content-Type-Options: nosniff',
  answer: ({ query }) => plainTextEcho(query.challenge),
};
