import { Router } from 'express';
import type { AppDeps } from '../app-deps';
import { contextOf } from '../http/context';

export function metricsRoutes(deps: AppDeps): Router {
  const router = Router();
  router.get('/metrics', async (_req, res) => {
    contextOf(res).route = 'metrics';
    res.setHeader('Content-Type', deps.metrics.registry.contentType);
    res.send(await deps.metrics.registry.metrics());
  });
  return router;
}
