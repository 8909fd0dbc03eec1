import { joinKind, text } from './body';
import type { Provider } from './provider';
import { header } from './schemes/signing';
import { rawBodyHmac } from './schemes/raw-body-hmac';

export const sentry: Provider = {
  name: 'sentry',
  title: 'Sentry (integration platform webhooks)',
  verifies: 'Sentry-Hook-Signature: hex HMAC-SHA256 of the raw body, key = the integration Client Secret (Sentry-Hook-Timestamp is not signed, so it is not checked)',
  deliveryIdSource: 'header Request-ID',
  signatureHeaders: () => ['sentry-hook-signature'],
  ...rawBodyHmac({ header: 'sentry-hook-signature', algorithm: 'sha256', encoding: 'hex', prefix: '' }),
  kind: (headers, body) => joinKind(header(headers, 'sentry-hook-resource'), text(body, 'action')),
  deliveryId: (headers) => header(headers, 'request-id'),
};
