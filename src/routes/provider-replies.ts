import type { Request, Response } from 'express';
import type { AppDeps } from '../app-deps';
import type { ProviderRequest } from '../providers/gate';
import { getHandshake } from '../providers/gate';
import type { Reply } from '../providers/provider';
import { PATH_PATTERN } from '../registry/schemas';
import { noteDelivery } from '../http/delivery-notes';
import { lookup } from './lookup';

/** The request as a provider sees it; the URL is the public one the sender called (Twilio signs it). */
export function providerRequest(req: Request, deps: AppDeps): ProviderRequest {
  const base = deps.config.PUBLIC_BASE_URL?.replace(/\/+$/, '') ?? `${req.protocol}://${req.get('host') ?? ''}`;
  return { headers: req.headers, query: req.query as Record<string, unknown>, url: base + req.originalUrl };
}

export function sendReply(res: Response, reply: Reply & { outcome?: string; eventId?: string }): void {
  res.locals.outcome = reply.outcome ?? 'ok';
  if (reply.headers['X-Event-Id']) res.locals.eventId = reply.headers['X-Event-Id'];
  res.status(reply.status).set(reply.headers);
  if (reply.body === '') res.end();
  else res.send(reply.body);
}

/** GET on a trigger path: only a provider's GET handshake is answered (contract §2.2, §10). */
export async function answerGet(deps: AppDeps, req: Request, res: Response): Promise<void> {
  const path = req.params.path as string;
  const trigger = PATH_PATTERN.test(path) ? await lookup(deps.registry.triggers, path) : undefined;
  if (trigger) noteDelivery(res, { target: { kind: 'trigger', id: path } });
  sendReply(res, getHandshake(trigger?.deployed ? trigger.provider : undefined, providerRequest(req, deps)));
}
