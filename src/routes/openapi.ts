import { Router } from 'express';
import type { AppDeps } from '../app-deps';
import { contextOf } from '../http/context';
import { openApiDocument } from './openapi-document';

/** GET /openapi.json: the OpenAPI 3.1 description of every route (built once, from the zod schemas that validate requests). */
export function openapiRoutes(_deps: AppDeps): Router {
  const router = Router();
  let body: string | undefined;
  router.get('/openapi.json', (_req, res) => {
    contextOf(res).route = 'openapi';
    body ??= JSON.stringify(openApiDocument());
    res.type('application/json').send(body);
  });
  return router;
}
