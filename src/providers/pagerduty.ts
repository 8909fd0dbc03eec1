import { joinKind, text } from './body';
import type { Provider } from './provider';
import { rawBodyHmac } from './schemes/raw-body-hmac';

export const pagerduty: Provider = {
  name: 'pagerduty',
  title: 'PagerDuty (v3 webhook subscriptions)',
  verifies: 'X-PagerDuty-Signature: comma-separated v1=<hex HMAC-SHA256 of the raw body>, one per active secret; key = the subscription secret as UTF-8 (not base64-decoded)',
  deliveryIdSource: 'body event.id',
  deliveryIdFrom: 'signed',
  signatureHeaders: () => ['x-pagerduty-signature'],
  ...rawBodyHmac({ header: 'x-pagerduty-signature', algorithm: 'sha256', encoding: 'hex', prefix: 'v1=', separator: ',' }),
  kind: (_headers, body) => joinKind(text(body, 'event', 'event_type')),
  deliveryId: (_headers, body) => text(body, 'event', 'id'),
};
