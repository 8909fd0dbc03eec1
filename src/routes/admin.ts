import express, { Router, type NextFunction, type Request, type Response } from 'express';
import type { AppDeps } from '../app-deps';
import { Refusal } from '../outcomes/refusal';
import { parseJsonSafely } from '../body/safe-json';
import { contextOf } from '../http/context';
import { validate } from '../http/validation';
import { publicChannel, publicTrigger, toStoredChannel, toStoredTrigger } from '../registry/records';
import type { Collection } from '../registry/registry';
import { refuseAuthOnSignatureHeader, requirePublicUrl } from '../providers/trigger-field';
import { CHANNEL_ID_PATTERN, channelInputSchema, PATH_PATTERN, triggerInputSchema } from '../registry/schemas';
import { secretMatches, sha256Hex } from '../security';
import { registryCall } from './lookup';
import { ingressGate } from './http-gate';
import { providerCatalogueRoutes } from './provider-catalogue';
import { validateRoute } from './admin-validate';
import { deliveriesRoutes } from './admin-deliveries';
import { bearerToken } from './trigger-auth';
import { admitSchema } from '../registry/admit-schema';

const DEFAULT_PAGE = 50;
const MAX_PAGE = 500;

/** The admin API (contract §8). Without ADMIN_TOKEN it does not exist (404). */
export function adminRoutes(deps: AppDeps): Router {
  const router = Router();
  const adminTokenHash = deps.config.ADMIN_TOKEN && sha256Hex(deps.config.ADMIN_TOKEN);
  router.use('/admin', (req, res, next) => {
    contextOf(res).route = 'admin';
    if (!adminTokenHash) return next(new Refusal('not_found', 'no such route'));
    // Wrong tokens are throttled per client address (429 auth_throttled), like the ingress routes.
    ingressGate(deps, req, res, { target: 'admin' })
      .verify(() => {
        if (!secretMatches(bearerToken(req.get('authorization')), adminTokenHash)) {
          throw new Refusal('credentials_invalid', 'missing or invalid admin token', undefined, { challenge: 'Bearer' });
        }
      })
      .then(() => next(), next);
  });
  validateRoute(router, deps);
  router.use('/admin', express.text({ type: ['application/json', 'application/*+json'], limit: '1mb' }), parseJsonText);

  // The admin API has its own port: without PUBLIC_BASE_URL, URLs name the admin request's
  // host with the public PORT (the port the admin request came in on is not the senders').
  const publicPort = deps.config.PORT === 0 ? '' : `:${deps.config.PORT}`;
  const baseUrl = (req: Request) => deps.config.PUBLIC_BASE_URL ?? `${req.protocol}://${req.hostname}${publicPort}`;
  resource(router, '/admin/triggers', PATH_PATTERN, deps.registry.triggers, {
    toStored: async (body) => {
      const input = refuseAuthOnSignatureHeader(requirePublicUrl(validate(triggerInputSchema, body), deps.config.PUBLIC_BASE_URL));
      if (input.schema !== undefined) await admitSchema(input.schema);
      return toStoredTrigger(input);
    },
    toPublic: (id, value, req) => publicTrigger(id, value, baseUrl(req)),
    idName: 'path',
  });
  resource(router, '/admin/channels', CHANNEL_ID_PATTERN, deps.registry.channels, {
    toStored: (body) => toStoredChannel(validate(channelInputSchema, body)),
    toPublic: (id, value, req) => publicChannel(id, value, baseUrl(req)),
    idName: 'channelId',
  });
  deliveriesRoutes(router, deps);
  providerCatalogueRoutes(router);
  return router;
}

/**
 * Admin bodies are JSON, read with the same depth limit as webhook bodies: a document nested
 * thousands deep would overflow the stack of the schema check (a RangeError, a 500).
 */
function parseJsonText(req: Request, _res: Response, next: NextFunction): void {
  if (typeof req.body !== 'string') return next();
  if (req.body.trim() === '') {
    req.body = undefined;
    return next();
  }
  try {
    req.body = parseJsonSafely(req.body);
    next();
  } catch (error) {
    next(new Refusal('invalid_json', 'malformed JSON body', { problem: (error as Error).message.slice(0, 200) }));
  }
}

interface ResourceShape<T> {
  toStored(body: unknown): T | Promise<T>;
  toPublic(id: string, value: T, req: Request): unknown;
  idName: string;
}

/** PUT (upsert), GET, DELETE one; GET a page. */
function resource<T>(router: Router, base: string, idPattern: RegExp, collection: Collection<T>, shape: ResourceShape<T>): void {
  const idOf = (req: Request) => {
    const id = req.params.id as string;
    if (!idPattern.test(id)) throw new Refusal('invalid_parameter', `invalid ${shape.idName}`, { pattern: idPattern.source });
    return id;
  };

  router.put(`${base}/:id`, async (req, res) => {
    const id = idOf(req);
    const stored = await shape.toStored(req.body ?? {});
    await registryCall(collection.put(id, stored));
    res.json({ data: shape.toPublic(id, stored, req) });
  });
  router.get(`${base}/:id`, async (req, res) => {
    const id = idOf(req);
    const stored = await registryCall(collection.get(id));
    if (stored === undefined) throw new Refusal('not_found', `no such ${shape.idName}`);
    res.json({ data: shape.toPublic(id, stored, req) });
  });
  router.delete(`${base}/:id`, async (req, res) => {
    const id = idOf(req);
    if (!(await registryCall(collection.delete(id)))) throw new Refusal('not_found', `no such ${shape.idName}`);
    res.json({ data: { [shape.idName]: id, deleted: true } });
  });
  router.get(base, async (req, res) => {
    const limit = pageSize(req.query.limit);
    const cursor = decodeCursor(req.query.cursor);
    const page = await registryCall(collection.list(limit, cursor));
    res.json({
      data: page.items.map((item) => shape.toPublic(item.id, item.value, req)),
      nextCursor: page.nextCursor === null ? null : Buffer.from(page.nextCursor).toString('base64url'),
    });
  });
}

export function pageSize(raw: unknown): number {
  if (raw === undefined) return DEFAULT_PAGE;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > MAX_PAGE) {
    throw new Refusal('invalid_parameter', `limit must be a whole number from 1 to ${MAX_PAGE}`);
  }
  return n;
}

export function decodeCursor(raw: unknown): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string' || !/^[A-Za-z0-9_-]{1,256}$/.test(raw)) throw new Refusal('invalid_parameter', 'invalid cursor');
  return Buffer.from(raw, 'base64url').toString();
}
