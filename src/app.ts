import express from 'express';
import helmet from 'helmet';
import type { AppDeps } from './app-deps';
import { accessLog } from './http/access-log';
import { errorHandler, notFound } from './http/error-handler';
import { requestId } from './http/request-id';
import { adminRoutes } from './routes/admin';
import { healthRoutes } from './routes/health';
import { metricsRoutes } from './routes/metrics';
import { webhookRoutes } from './routes/webhooks';
import { whatsappRoutes } from './routes/whatsapp';

/** Express wiring only: no I/O happens here. */
export function createApp(deps: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.use(helmet({ contentSecurityPolicy: false, crossOriginEmbedderPolicy: false }));
  app.use(requestId());
  app.use(accessLog(deps.logger, deps.metrics));
  app.use((_req, res, next) => {
    if (deps.lifecycle.draining) res.setHeader('Connection', 'close');
    next();
  });
  app.use(healthRoutes(deps));
  app.use(metricsRoutes(deps));
  app.use(adminRoutes(deps));
  app.use(webhookRoutes(deps));
  app.use(whatsappRoutes(deps));
  app.use(notFound);
  app.use(errorHandler(deps.logger));
  return app;
}
