import type { Router, Request, Response } from 'express';
import type { AppDeps } from '../app-deps';
import type { EntryRoute } from '../http/app-entry';
import { contextOf } from '../http/context';
import { noteDelivery } from '../http/delivery-notes';
import { methodNotAllowed } from '../outcomes/refusal';
import { acceptUpload } from '../ingest/accept-upload';
import { acceptWebhook } from '../ingest/accept-webhook';
import { admit } from '../ingress/pipeline';
import { openGate } from '../providers/gate';
import { storeLearnedSecret } from '../registry/learned-secret';
import { keyFetcherOf } from '../keys/process-key-fetcher';
import { providerNamed } from '../providers/registry';
import { PATH_PATTERN } from '../registry/schemas';
import { senderBodyLimit } from './body-limit';
import { ingressGate } from './http-gate';
import { checkToken } from './trigger-auth';
import { deployedTrigger, registeredTrigger, triggerBuckets } from './trigger-lookup';
import { sendReply, sendWebhookAck } from './answers';
import { answerGet, providerRequest } from './provider-replies';
import { streamsFiles, uploadRequest } from './upload-request';

const WEBHOOK_PREFIX = '/api/webhooks/trigger/';
const WEBHOOK_ROUTE = `${WEBHOOK_PREFIX}:path`;
/** A webhook URL whose path PATH_PATTERN allows as it stands (nothing for express to decode), and perhaps a query. */
const PLAIN_WEBHOOK_URL = new RegExp(`^${WEBHOOK_PREFIX}${PATH_PATTERN.source.slice(1, -1)}(?:\\?|$)`);

/**
 * POST /api/webhooks/trigger/{path} (contract §2, §10). `mount` adds it to a router (an app's
 * own, or a new one). `takes` and `serve` reach it from the app's entry (src/http/app-entry.ts)
 * without express's router: a POST to a plainly spelled webhook URL goes straight to the
 * route's handler, with the params and route the router would give it. Anything else (another
 * method, a trailing slash, other letter case, an escape) takes the router, which matches it
 * as before. A rejected handler goes to `next`, as the router sends it.
 */
export function webhookRoute(deps: AppDeps): EntryRoute & { mount<R extends Pick<Router, 'route'>>(router: R): R } {
  const handler = webhookHandler(deps);
  let route: { path: string } | undefined;
  return {
    mount(router) {
      // One route layer for every method (an app's `all` would add one per method, walked in turn).
      route = router.route(WEBHOOK_ROUTE).all(handler);
      return router;
    },
    takes: (req) => route !== undefined && req.method === 'POST' && PLAIN_WEBHOOK_URL.test(req.url ?? ''),
    serve(req, res, next) {
      // `takes` matched the URL: the path runs from the prefix to the query, if any.
      const query = req.url.indexOf('?', WEBHOOK_PREFIX.length);
      req.params = { path: req.url.slice(WEBHOOK_PREFIX.length, query < 0 ? undefined : query) };
      req.route = route;
      handler(req, res).catch((error: unknown) => next(error ?? new Error('Rejected promise')));
    },
  };
}

function webhookHandler(deps: AppDeps): (req: Request, res: Response) => Promise<void> {
  return async (req, res) => {
    contextOf(res).route = 'webhook';
    if (req.method === 'GET') return answerGet(deps, req, res);
    if (req.method !== 'POST') {
      // The same 405 whether or not the path exists (no probing); a registered trigger's log still shows it.
      await registeredTrigger(deps, req.params.path as string, res).catch(() => undefined);
      throw methodNotAllowed();
    }
    const path = req.params.path as string;
    const trigger = await deployedTrigger(deps, path, res);
    const gate = ingressGate(deps, req, res, { target: `trigger:${path}`, workspaceId: trigger.workspaceId });
    const provider = trigger.provider && openGate(trigger.provider, providerRequest(req, deps), deps.metrics, deps.logger, keyFetcherOf(deps));
    const admitted = await admit(gate, {
      buckets: triggerBuckets(deps.config, path, trigger),
      bodyLimit: senderBodyLimit(deps.config, trigger.provider && providerNamed(trigger.provider.name)),
      contentType: req.headers['content-type'],
      // The token and a provider's signature headers (or its unsigned handshake).
      ...((trigger.auth || provider) && {
        checkHeaders: () => {
          checkToken(req, trigger);
          return provider?.beforeBody();
        },
        provesCredential: trigger.auth !== undefined,
      }),
      ...(provider && { checkBody: (raw: Buffer) => provider.afterBody(raw), diagnose: (raw?: Buffer) => provider.diagnose(raw) }),
      ...(!provider && streamsFiles(deps, req) && { acceptStream: () => acceptUpload(deps, uploadRequest(req, res, path, trigger, gate)) }),
      accept: (raw) =>
        acceptWebhook(deps, {
          path,
          trigger,
          method: req.method,
          headers: req.headers,
          query: req.query as Record<string, unknown>,
          raw,
          provider,
          trace: contextOf(res).trace,
          note: (facts) => noteDelivery(res, facts),
        }),
    });
    if ('reply' in admitted) {
      // Asana's handshake: the secret is stored (sealed) before it is echoed, so the first signed delivery finds it.
      if (admitted.reply.learnedSecret) await storeLearnedSecret(deps.registry.triggers, path, trigger, admitted.reply.learnedSecret);
      return sendReply(res, admitted.reply);
    }
    const ack = admitted.result;
    if (provider) {
      if ('ignored' in ack) noteDelivery(res, { kind: ack.kind });
      return sendReply(res, provider.reply(ack));
    }
    if ('ignored' in ack) throw new Error('only a provider gate filters deliveries');
    sendWebhookAck(res, ack);
  };
}
