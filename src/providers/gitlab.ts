import { joinKind, text } from './body';
import type { Provider } from './provider';
import { header } from './schemes/signing';
import { tokenScheme } from './schemes/token-check';

const TOKEN = 'x-gitlab-token';

export const gitlab: Provider = {
  name: 'gitlab',
  title: 'GitLab',
  /** The secret itself is the credential: it authenticates the sender, not the body (contract §10.A 8). */
  family: 'token',
  authenticates: 'sender',
  verifies: 'X-Gitlab-Token equals the secret token set on the webhook, constant time',
  deliveryIdSource: 'header Idempotency-Key (stable across resends), else X-Gitlab-Event-UUID',
  signatureHeaders: () => [TOKEN],
  ...tokenScheme(TOKEN),
  kind: (_headers, body) => joinKind(text(body, 'object_kind'), text(body, 'object_attributes', 'action')),
  deliveryId: (headers) => header(headers, 'idempotency-key') ?? header(headers, 'x-gitlab-event-uuid'),
};
