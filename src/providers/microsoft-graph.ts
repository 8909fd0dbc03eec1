import { createHash } from 'node:crypto';
import { field, isObject, rawJson, text, UNKNOWN_KIND } from './body';
import { plainTextEcho } from './echo';
import type { Provider } from './provider';
import { equalToken } from './schemes/signing';

function notifications(body: unknown): unknown[] | undefined {
  const value = field(body, 'value');
  return Array.isArray(value) && value.length > 0 ? value : undefined;
}

export const microsoftGraph: Provider = {
  name: 'microsoft-graph',
  title: 'Microsoft Graph change notifications',
  /** The secret itself is the credential: it authenticates the sender, not the body (contract §10.A 8). */
  family: 'token',
  authenticates: 'sender',
  verifies: 'every value[].clientState equals the secret (the subscription\'s clientState), constant time; Graph signs nothing else',
  deliveryIdSource: 'none from Graph: synthesized from each notification\'s subscriptionId, changeType, resource, resourceData id and @odata.etag, lifecycleEvent',
  deliveryIdFrom: 'signed',
  signatureHeaders: () => [],
  precheck: () => undefined,
  verify(request) {
    const items = notifications(rawJson(request.raw));
    if (!items) return { ok: false, reason: 'signature_missing' };
    let matched: string | undefined;
    for (const item of items) {
      const presented = text(item, 'clientState');
      if (!presented) return { ok: false, reason: 'signature_missing' };
      const secret = request.secrets.find((candidate) => equalToken(presented, candidate));
      if (secret === undefined) return { ok: false, reason: 'signature_invalid' };
      matched ??= secret;
    }
    return { ok: true, secret: matched as string };
  },
  handshake: {
    method: 'POST',
    signed: false,
    describe: 'POST ?validationToken=… : 200 text/plain, the URL-decoded token',
    answer: ({ query }) => plainTextEcho(query.validationToken),
  },
  stripSecrets(body) {
    for (const item of notifications(body) ?? []) {
      if (isObject(item)) delete item.clientState;
    }
  },
  kind(_headers, body) {
    const first = notifications(body)?.[0];
    const lifecycle = text(first, 'lifecycleEvent');
    if (lifecycle) return `lifecycle.${lifecycle}`;
    return text(first, 'changeType') ?? UNKNOWN_KIND;
  },
  deliveryId(_headers, body) {
    const items = notifications(body);
    if (!items) return undefined;
    const ids = items.map((item) =>
      [
        text(item, 'id'),
        text(item, 'subscriptionId'),
        text(item, 'changeType'),
        text(item, 'lifecycleEvent'),
        text(item, 'resource'),
        text(item, 'resourceData', 'id'),
        text(item, 'resourceData', '@odata.etag'),
      ].join('|'),
    );
    return `graph:${createHash('sha256').update(ids.join('\n')).digest('hex')}`;
  },
};
