import type { IncomingHttpHeaders } from 'node:http';
import { embeddedJson, field, joinKind, text } from './body';
import type { Provider } from './provider';
import { rawBodyHmac } from './schemes/raw-body-hmac';
import { header } from './schemes/signing';

const SIGNATURE = 'x-hub-signature-256';

/** X-Hub-Signature-256: `sha256=` and the hex HMAC-SHA256 of the raw body. */
const scheme = rawBodyHmac({ header: SIGNATURE, algorithm: 'sha256', encoding: 'hex', prefix: 'sha256=' });

/** A form-encoded delivery carries its JSON in `payload`. */
function payloadOf(body: unknown): unknown {
  return field(body, 'action') === undefined && typeof field(body, 'payload') === 'string' ? embeddedJson(field(body, 'payload')) : body;
}

export const github: Provider = {
  name: 'github',
  title: 'GitHub',
  verifies: 'X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body> (no timestamp: the delivery id dedupe is the replay defence)',
  deliveryIdSource: 'header X-GitHub-Delivery (the same GUID on a redelivery)',
  signatureHeaders: () => [SIGNATURE, 'x-hub-signature'],
  precheck: scheme.precheck,
  verify: scheme.verify,
  kind: (headers: IncomingHttpHeaders, body) => joinKind(header(headers, 'x-github-event'), text(payloadOf(body), 'action')),
  deliveryId: (headers) => header(headers, 'x-github-delivery'),
  pings: ['ping'],
};
