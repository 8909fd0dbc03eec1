import express from 'express';
import type { AppDeps } from './app-deps';
import { writeKeptHeaders } from './http/answer-headers';
import { enterDirectly } from './http/app-entry';
import { errorHandler, notFound } from './http/error-handler';
import { requestContext } from './http/request-context';
import { machineHeaders, securityHeaders, type Header } from './http/security-headers';
import { adminRoutes } from './routes/admin';
import { healthRoutes, livenessRoutes } from './routes/health';
import { metricsRoutes } from './routes/metrics';
import { channelRoutes } from './routes/channels';
import { webhookRoute } from './routes/webhooks';
import { openapiRoutes } from './routes/openapi';
import { passThroughTracing } from './tracing/tracing';

/**
 * The public listener (PORT): the ingress routes and /healthz, nothing else. Express wiring
 * only: no I/O happens here.
 */
export function createApp(deps: AppDeps): express.Express {
  const webhooks = webhookRoute(deps);
  const { app, context } = baseApp(deps, machineHeaders());
  // The busiest route first, on the app's own router: no nested router to walk per request.
  webhooks.mount(app);
  app.use(livenessRoutes());
  app.use(channelRoutes(deps));
  const onError = finish(app, deps);
  // The webhook fast path: a plainly spelled webhook POST skips express's router, running only
  // the same first layer, the route and the error handler. A middleware mounted on this app is
  // skipped there: test/http/app-entry-layers.test.ts fails until the fast path runs it too.
  enterDirectly(app, { first: context, route: webhooks, onError });
  return app;
}

/**
 * The admin listener (ADMIN_PORT): the admin API, /metrics, /readyz and /healthz. Kept off
 * the public port, as API gateways keep their proxy and admin ports apart: expose it only
 * inside the cluster.
 */
export function createAdminApp(deps: AppDeps): express.Express {
  const { app } = baseApp(deps, securityHeaders());
  app.use(healthRoutes(deps));
  app.use(metricsRoutes(deps));
  app.use(adminRoutes(deps));
  app.use(openapiRoutes(deps));
  finish(app, deps);
  return app;
}

/** An app with the request context as its one first layer (returned too, for the app's entry). */
function baseApp(deps: AppDeps, headers: Header[]): { app: express.Express; context: express.RequestHandler } {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  writeKeptHeaders(app.response);
  // req.ip: the socket's address, or X-Forwarded-For as far as TRUST_PROXY trusts it.
  app.set('trust proxy', deps.config.TRUST_PROXY ?? false);
  readClientIpOnce(app, deps.config.TRUST_PROXY);
  // One layer: the tracing middleware runs as the request context's `next`.
  const context = requestContext(deps, headers, (deps.tracing ?? passThroughTracing).requests);
  app.use(context);
  return { app, context };
}

const CLIENT_IP = Symbol('clientIp');

function socketAddress(this: express.Request): string | undefined {
  return this.socket.remoteAddress;
}

/**
 * express's `req.ip` parses X-Forwarded-For (proxy-addr) on every read, and a request reads it
 * twice (its rate-limit share, its delivery log entry): behind a trusted proxy it is worked out
 * once per request. Trusting no proxy, it is the socket's address (which the socket keeps),
 * all proxy-addr would work out: read as it is, without a property added to each request.
 */
function readClientIpOnce(app: express.Express, trust: boolean | number | string | undefined): void {
  const proxied = Object.getOwnPropertyDescriptor(express.request, 'ip')!.get!;
  const noProxy = trust === undefined || trust === false || trust === 0;
  Object.defineProperty(app.request, 'ip', {
    configurable: true,
    enumerable: true,
    get: noProxy
      ? socketAddress
      : function (this: express.Request & { [CLIENT_IP]?: string }) {
          return (this[CLIENT_IP] ??= proxied.call(this));
        },
  });
}

/** The 404 and the error handler that end the app's stack; returns the error handler. */
function finish(app: express.Express, deps: AppDeps): express.ErrorRequestHandler {
  const onError = errorHandler(deps.logger);
  app.use(notFound);
  app.use(onError);
  return onError;
}
