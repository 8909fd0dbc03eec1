import { Router } from 'express';
import type { AppDeps } from '../app-deps';
import { errorBody } from '../http/errors';

const CHECK_TIMEOUT_MS = 1000;

/** /healthz: the process answers. /readyz: every dependency answers and we are not draining. */
export function healthRoutes(deps: AppDeps): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.locals.route = 'health';
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    res.locals.route = 'health';
    const down = await Promise.all(deps.checks.map(async (check) => ((await failure(check.ping)) ? check.name : undefined)));
    const problems = down.filter((name): name is string => name !== undefined);
    if (deps.lifecycle.draining) problems.push('draining');
    if (problems.length === 0) {
      res.json({ status: 'ready', checks: deps.checks.map((c) => c.name) });
      return;
    }
    res.locals.outcome = 'unavailable';
    res.setHeader('Retry-After', '1');
    res.status(503).json(errorBody('SERVICE_UNAVAILABLE', `not ready: ${problems.join(', ')}`, { down: problems }));
  });
  return router;
}

async function failure(ping: () => Promise<void>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timeout')), CHECK_TIMEOUT_MS);
  });
  try {
    await Promise.race([ping(), timeout]);
    return false;
  } catch {
    return true;
  } finally {
    clearTimeout(timer);
  }
}
