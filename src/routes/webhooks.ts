import { Router, type Request } from 'express';
import type { AppDeps } from '../app-deps';
import { HttpError } from '../http/errors';
import { acceptWebhook } from '../ingest/accept-webhook';
import { readRawBody } from '../ingest/read-body';
import { PATH_PATTERN, type StoredTrigger } from '../registry/schemas';
import { secretMatches } from '../security';
import { lookup } from './lookup';

/** POST /api/webhooks/trigger/{path} (contract §2). */
export function webhookRoutes(deps: AppDeps): Router {
  const router = Router();
  router.all('/api/webhooks/trigger/:path', async (req, res) => {
    res.locals.route = 'webhook';
    if (req.method !== 'POST') {
      throw new HttpError('METHOD_NOT_ALLOWED', 'only POST is accepted', undefined, { Allow: 'POST' });
    }
    const path = req.params.path as string;
    const trigger = PATH_PATTERN.test(path) ? await lookup(deps.registry.triggers, path) : undefined;
    if (!trigger || !trigger.deployed) throw new HttpError('NOT_FOUND', 'no such trigger');
    authenticate(req, trigger);

    const { config } = deps;
    await deps.enforceRateLimits(req, res, [
      { kind: 'trigger', id: path, ...(trigger.rateLimit ?? config.RATE_LIMIT_DEFAULT) },
      { kind: 'workspace', id: trigger.workspaceId, ...config.RATE_LIMIT_WORKSPACE },
    ]);
    const raw = await readRawBody(req, res, config.MAX_BODY_BYTES, deps.bodyBudget);
    const ack = await acceptWebhook(deps, {
      path,
      trigger,
      method: req.method,
      headers: req.headers,
      query: req.query as Record<string, unknown>,
      raw,
    });
    res.locals.outcome = ack.replayed ? 'duplicate' : 'accepted';
    res.locals.eventId = ack.eventId;
    res.setHeader('X-Event-Id', ack.eventId);
    if (ack.replayed) res.setHeader('Idempotent-Replayed', 'true');
    res.status(ack.status).json(ack.body);
  });
  return router;
}

/** Bearer token, or the trigger's own header only when it names one. */
function authenticate(req: Request, trigger: StoredTrigger): void {
  if (!trigger.auth) return;
  const presented = trigger.auth.header ? req.get(trigger.auth.header) : bearerToken(req.get('authorization'));
  if (!secretMatches(presented, trigger.auth.tokenHash)) {
    const headers: Record<string, string> = trigger.auth.header ? {} : { 'WWW-Authenticate': 'Bearer' };
    throw new HttpError('UNAUTHORIZED', 'missing or invalid credentials', undefined, headers);
  }
}

export function bearerToken(header: string | undefined): string | undefined {
  const match = header?.match(/^Bearer[ \t]+(\S+)\s*$/i);
  return match?.[1];
}
