import type { Router } from 'express';
import type { AppDeps } from '../app-deps';
import { InvalidCursorError, logTarget, type LogTarget } from '../delivery-log/delivery-log';
import { Refusal } from '../outcomes/refusal';
import { CHANNEL_ID_PATTERN, PATH_PATTERN } from '../registry/schemas';
import { decodeCursor, pageSize } from './admin';
import { lookup } from './lookup';

/**
 * GET /admin/triggers/{path}/deliveries and GET /admin/channels/{channelId}/deliveries
 * (contract §13): the delivery log, newest first, `{ data, nextCursor }`. With
 * DELIVERY_LOG_MAX=0 the log is off and every page is empty.
 */
export function deliveriesRoutes(router: Router, deps: AppDeps): void {
  const sources = [
    { base: '/admin/triggers', kind: 'trigger', pattern: PATH_PATTERN, idName: 'path', collection: deps.registry.triggers },
    { base: '/admin/channels', kind: 'channel', pattern: CHANNEL_ID_PATTERN, idName: 'channelId', collection: deps.registry.channels },
  ] as const;
  for (const { base, kind, pattern, idName, collection } of sources) {
    router.get(`${base}/:id/deliveries`, async (req, res) => {
      const id = req.params.id as string;
      if (!pattern.test(id)) throw new Refusal('invalid_parameter', `invalid ${idName}`, { pattern: pattern.source });
      const limit = pageSize(req.query.limit);
      const cursor = decodeCursor(req.query.cursor);
      const record = await lookup<{ registrationId?: string }>(collection, id);
      if (record === undefined) throw new Refusal('not_found', `no such ${idName}`);
      // This registration's log only (contract §13.1): not a previous tenant's of the same path.
      const page = deps.deliveryLog ? await readPage(deps, logTarget(kind, id, record), limit, cursor) : { entries: [], nextCursor: null };
      res.json({
        data: page.entries,
        nextCursor: page.nextCursor === null ? null : Buffer.from(page.nextCursor).toString('base64url'),
      });
    });
  }
}

async function readPage(deps: AppDeps, target: LogTarget, limit: number, cursor: string | undefined) {
  try {
    return await deps.deliveryLog!.page(target, limit, cursor);
  } catch (error) {
    if (error instanceof InvalidCursorError) throw new Refusal('invalid_parameter', 'invalid cursor');
    deps.logger.warn({ err: (error as Error)?.message }, 'delivery log unreadable');
    throw new Refusal('registry_unavailable', 'the delivery log cannot be read now', {});
  }
}
