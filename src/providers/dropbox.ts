import { plainTextEcho } from './echo';
import type { Provider } from './provider';
import { rawBodyHmac } from './schemes/raw-body-hmac';

export const dropbox: Provider = {
  name: 'dropbox',
  title: 'Dropbox',
  verifies: 'X-Dropbox-Signature: hex HMAC-SHA256 of the raw body, key = the app secret',
  deliveryIdSource: 'none: a notification only says "these accounts changed", so the body fingerprint (5 min) is the dedupe',
  signatureHeaders: () => ['x-dropbox-signature'],
  ...rawBodyHmac({ header: 'x-dropbox-signature', algorithm: 'sha256', encoding: 'hex', prefix: '' }),
  handshake: {
    method: 'GET',
    signed: false,
    describe: 'GET ?challenge=… : 200 text/plain echo with X-Content-Type-Options: nosniff',
    answer: ({ query }) => plainTextEcho(query.challenge),
  },
  kind: () => 'list_folder',
  deliveryId: () => undefined,
};
