import { Router } from 'express';
import type { AppDeps } from '../app-deps';
import { contextOf } from '../http/context';
import { Refusal } from '../outcomes/refusal';
import { checkDependencies } from '../observability/dependencies';

/**
 * /healthz: the process answers. /readyz (CONTRACT §9): 200 while this process can take
 * traffic, started and not draining; 503 otherwise (the contract's error body, with the same
 * report in its details). Redis and the sink are shared by every pod: they are reported in the
 * body, `{ status, checks: { redis, sink, … }, details }`, never by a 503 that would take every
 * pod out of the Service at once.
 *
 * Plain routers: they can be mounted on any listener.
 */
export function healthRoutes(deps: AppDeps): Router {
  const router = livenessRoutes();
  router.get('/readyz', async (_req, res) => {
    contextOf(res).route = 'health';
    const { checks, details } = await checkDependencies(deps.checks);
    const { started, draining } = deps.lifecycle;
    const status = draining ? 'draining' : started ? 'ready' : 'starting';
    const body = { status, checks, ...(Object.keys(details).length > 0 ? { details } : {}) };
    if (status === 'ready') {
      res.json(body);
      return;
    }
    // The contract's error body; what a 200 says is in its details. A probe asks again within a second.
    throw draining
      ? new Refusal('closed', 'not ready: draining', body, { retryAfterSeconds: 1 })
      : new Refusal('starting', 'not ready: starting', body);
  });
  return router;
}

/** /healthz alone: what the public listener serves of the operations routes. */
export function livenessRoutes(): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    contextOf(res).route = 'health';
    res.json({ status: 'ok' });
  });
  return router;
}
