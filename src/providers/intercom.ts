import { joinKind, text } from './body';
import type { Provider } from './provider';
import { rawBodyHmac } from './schemes/raw-body-hmac';

export const intercom: Provider = {
  name: 'intercom',
  title: 'Intercom',
  verifies: 'X-Hub-Signature: sha1=<hex HMAC-SHA1 of the raw body>, key = the app client_secret',
  deliveryIdSource: 'body id (notif_…)',
  deliveryIdFrom: 'signed',
  signatureHeaders: () => ['x-hub-signature'],
  ...rawBodyHmac({ header: 'x-hub-signature', algorithm: 'sha1', encoding: 'hex', prefix: 'sha1=' }),
  kind: (_headers, body) => joinKind(text(body, 'topic')),
  deliveryId: (_headers, body) => text(body, 'id'),
  pings: ['ping'],
};
