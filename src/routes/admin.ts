import express, { Router, type Request } from 'express';
import type { AppDeps } from '../app-deps';
import { HttpError } from '../http/errors';
import { validate } from '../http/validation';
import { publicChannel, publicTrigger, toStoredChannel, toStoredTrigger } from '../registry/records';
import type { Collection } from '../registry/registry';
import { CHANNEL_ID_PATTERN, channelInputSchema, PATH_PATTERN, triggerInputSchema } from '../registry/schemas';
import { secretMatches, sha256Hex } from '../security';
import { registryCall } from './lookup';
import { bearerToken } from './webhooks';

const DEFAULT_PAGE = 50;
const MAX_PAGE = 500;

/** The admin API (contract §8). Without ADMIN_TOKEN it does not exist (404). */
export function adminRoutes(deps: AppDeps): Router {
  const router = Router();
  const adminTokenHash = deps.config.ADMIN_TOKEN && sha256Hex(deps.config.ADMIN_TOKEN);
  router.use('/admin', (req, res, next) => {
    res.locals.route = 'admin';
    if (!adminTokenHash) return next(new HttpError('NOT_FOUND', 'no such route'));
    if (!secretMatches(bearerToken(req.get('authorization')), adminTokenHash)) {
      return next(new HttpError('UNAUTHORIZED', 'missing or invalid admin token', undefined, { 'WWW-Authenticate': 'Bearer' }));
    }
    next();
  });
  router.use('/admin', express.json({ limit: '1mb' }));

  const baseUrl = (req: Request) => deps.config.PUBLIC_BASE_URL ?? `${req.protocol}://${req.get('host')}`;
  resource(router, '/admin/triggers', PATH_PATTERN, deps.registry.triggers, {
    toStored: (body) => toStoredTrigger(validate(triggerInputSchema, body)),
    toPublic: (id, value, req) => publicTrigger(id, value, baseUrl(req)),
    idName: 'path',
  });
  resource(router, '/admin/channels', CHANNEL_ID_PATTERN, deps.registry.channels, {
    toStored: (body) => toStoredChannel(validate(channelInputSchema, body)),
    toPublic: (id, value, req) => publicChannel(id, value, baseUrl(req)),
    idName: 'channelId',
  });
  return router;
}

interface ResourceShape<T> {
  toStored(body: unknown): T;
  toPublic(id: string, value: T, req: Request): unknown;
  idName: string;
}

/** PUT (upsert), GET, DELETE one; GET a page. */
function resource<T>(router: Router, base: string, idPattern: RegExp, collection: Collection<T>, shape: ResourceShape<T>): void {
  const idOf = (req: Request) => {
    const id = req.params.id as string;
    if (!idPattern.test(id)) throw new HttpError('BAD_REQUEST', `invalid ${shape.idName}`, { pattern: idPattern.source });
    return id;
  };

  router.put(`${base}/:id`, async (req, res) => {
    const id = idOf(req);
    const stored = shape.toStored(req.body ?? {});
    await registryCall(collection.put(id, stored));
    res.json({ data: shape.toPublic(id, stored, req) });
  });
  router.get(`${base}/:id`, async (req, res) => {
    const id = idOf(req);
    const stored = await registryCall(collection.get(id));
    if (stored === undefined) throw new HttpError('NOT_FOUND', `no such ${shape.idName}`);
    res.json({ data: shape.toPublic(id, stored, req) });
  });
  router.delete(`${base}/:id`, async (req, res) => {
    const id = idOf(req);
    if (!(await registryCall(collection.delete(id)))) throw new HttpError('NOT_FOUND', `no such ${shape.idName}`);
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

function pageSize(raw: unknown): number {
  if (raw === undefined) return DEFAULT_PAGE;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > MAX_PAGE) {
    throw new HttpError('BAD_REQUEST', `limit must be a whole number from 1 to ${MAX_PAGE}`);
  }
  return n;
}

function decodeCursor(raw: unknown): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string' || !/^[A-Za-z0-9_-]{1,256}$/.test(raw)) throw new HttpError('BAD_REQUEST', 'invalid cursor');
  return Buffer.from(raw, 'base64url').toString();
}
