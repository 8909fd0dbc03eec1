import { Router, type Request, type Response } from 'express';
import type { AppDeps } from '../app-deps';
import type { Config } from '../config/schema';
import { noteDelivery } from '../http/delivery-notes';
import { HttpError } from '../http/errors';
import { sendJson } from '../http/send-json';
import { acceptUpload } from '../ingest/accept-upload';
import { acceptWebhook, type WebhookAck } from '../ingest/accept-webhook';
import { openGate } from '../providers/gate';
import type { Bucket } from '../ratelimit/limiter';
import { PATH_PATTERN, type StoredTrigger } from '../registry/schemas';
import { secretMatches } from '../security';
import { diagnosed } from './delivery-diagnostics';
import { ingressGate } from './ingress-gate';
import { lookup } from './lookup';
import { answerGet, providerRequest, sendReply } from './provider-replies';
import { streamsFiles, uploadRequest } from './upload-request';

/** POST /api/webhooks/trigger/{path} (contract §2, §10). */
export function webhookRoutes(deps: AppDeps): Router {
  const router = Router();
  router.all('/api/webhooks/trigger/:path', async (req, res) => {
    res.locals.route = 'webhook';
    if (req.method === 'GET') return answerGet(deps, req, res);
    if (req.method !== 'POST') {
      throw new HttpError('method_not_allowed', 'only POST is accepted', undefined, { Allow: 'POST' });
    }
    const path = req.params.path as string;
    const trigger = await deployedTrigger(deps, path, res);
    const gate = ingressGate(deps, req, res, { target: `trigger:${path}`, workspaceId: trigger.workspaceId });
    const provider = openGate(trigger.provider, providerRequest(req, deps), deps.metrics);

    // Before the body: the token and a provider's signature headers (or its unsigned handshake).
    // A trigger without a signature is charged before its body; a signed one once the signature holds.
    if (!provider) {
      const buckets = triggerBuckets(deps.config, path, trigger);
      await (trigger.auth ? gate.verifyThenCharge(() => checkToken(req, trigger), buckets) : gate.charge(buckets));
    } else {
      if (trigger.auth) await gate.verify(() => checkToken(req, trigger));
      const early = await diagnosed(res, () => provider.diagnose(), () => gate.verify(() => provider.beforeBody()));
      if (early) return sendReply(res, early);
    }
    if (!provider && streamsFiles(deps, req)) return sendAck(res, await acceptUpload(deps, uploadRequest(req, res, path, trigger, gate)));
    const raw = await gate.readBody(deps.config.MAX_BODY_BYTES);
    noteDelivery(res, { bytes: raw.length });
    if (provider) {
      const handshake = await diagnosed(res, () => provider.diagnose(raw), () => gate.verify(() => provider.afterBody(raw)));
      if (handshake) return sendReply(res, handshake);
      await gate.charge(triggerBuckets(deps.config, path, trigger));
    }
    gate.reserveParseMemory(raw, req.headers['content-type']);

    const ack = await acceptWebhook(deps, {
      path,
      trigger,
      method: req.method,
      headers: req.headers,
      query: req.query as Record<string, unknown>,
      raw,
      provider,
      trace: res.locals.trace,
    });
    if (provider) {
      noteDelivery(res, 'ignored' in ack ? { kind: ack.kind } : ackNotes(ack));
      return sendReply(res, provider.reply(ack));
    }
    if ('ignored' in ack) throw new Error('only a provider gate filters deliveries');
    sendAck(res, ack);
  });
  return router;
}

function sendAck(res: Response, ack: WebhookAck): void {
  noteDelivery(res, ackNotes(ack));
  res.locals.outcome = ack.replayed ? 'duplicate' : 'accepted';
  res.locals.eventId = ack.eventId;
  res.setHeader('X-Event-Id', ack.eventId);
  if (ack.replayed) res.setHeader('Idempotent-Replayed', 'true');
  sendJson(res, ack.status, ack.body);
}

function ackNotes({ idempotencyKey, deliveryId, kind }: WebhookAck) {
  return { idempotencyKey, deliveryId, kind };
}

async function deployedTrigger(deps: AppDeps, path: string, res: Response): Promise<StoredTrigger> {
  const trigger = PATH_PATTERN.test(path) ? await lookup(deps.registry.triggers, path) : undefined;
  if (trigger) noteDelivery(res, { target: { kind: 'trigger', id: path } });
  if (!trigger || !trigger.deployed) throw new HttpError('not_found', 'no such trigger');
  return trigger;
}

function triggerBuckets(config: Config, path: string, trigger: StoredTrigger): Bucket[] {
  return [
    { kind: 'trigger', id: path, ...(trigger.rateLimit ?? config.RATE_LIMIT_DEFAULT) },
    { kind: 'workspace', id: trigger.workspaceId, ...config.RATE_LIMIT_WORKSPACE },
  ];
}

/** Bearer token, or the trigger's own header only when it names one. */
function checkToken(req: Request, trigger: StoredTrigger): void {
  if (!trigger.auth) return;
  const presented = trigger.auth.header ? req.get(trigger.auth.header) : bearerToken(req.get('authorization'));
  if (!secretMatches(presented, trigger.auth.tokenHash)) {
    const headers: Record<string, string> = trigger.auth.header ? {} : { 'WWW-Authenticate': 'Bearer' };
    throw new HttpError('credentials_invalid', 'missing or invalid credentials', undefined, headers);
  }
}

export function bearerToken(header: string | undefined): string | undefined {
  const match = header?.match(/^Bearer[ \t]+(\S+)\s*$/i);
  return match?.[1];
}
