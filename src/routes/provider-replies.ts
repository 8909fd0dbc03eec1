import type { Request, Response } from 'express';
import type { AppDeps } from '../app-deps';
import type { ProviderRequest } from '../providers/gate';
import { getHandshake, hasGetHandshake } from '../providers/gate';
import { admit } from '../ingress/pipeline';
import { sendReply } from './answers';
import { ingressGate } from './http-gate';
import { checkToken } from './trigger-auth';
import { registeredTrigger, triggerBuckets } from './trigger-lookup';

/** The request as a provider sees it; the URL is the public one the sender called (Twilio signs it). */
export function providerRequest(req: Request, deps: AppDeps): ProviderRequest {
  const base = deps.config.PUBLIC_BASE_URL?.replace(/\/+$/, '') ?? `${req.protocol}://${req.get('host') ?? ''}`;
  return { headers: req.headers, query: req.query as Record<string, unknown>, url: base + req.originalUrl };
}

/**
 * GET on a trigger path: only a provider's GET handshake is answered (contract §2.2, §10),
 * after the trigger's own `auth` when it has one, through the ingress gate: a wrong verify
 * token (403) or a challenge the gateway will not answer (400) counts as a failed
 * authentication, so nobody can use the handshake as an oracle at will. An answered handshake
 * is charged to the trigger's buckets and carries their headers, as a channel's is (contract §6).
 * Without the trigger's own `auth` it proved no credential anyone could not present (Dropbox's
 * challenge, X's CRC, eBay's challenge code), so its log entry goes to the strangers' share
 * (contract §13.1): asked for at will, it cannot push out the accepted deliveries.
 */
export async function answerGet(deps: AppDeps, req: Request, res: Response): Promise<void> {
  const path = req.params.path as string;
  const trigger = await registeredTrigger(deps, path, res);
  const stored = trigger?.deployed ? trigger.provider : undefined;
  if (!trigger || !hasGetHandshake(stored)) return sendReply(res, getHandshake(undefined, providerRequest(req, deps)));
  const gate = ingressGate(deps, req, res, { target: `trigger:${path}`, workspaceId: trigger.workspaceId });
  const { reply } = await admit(gate, {
    buckets: triggerBuckets(deps.config, path, trigger),
    handshake: () => {
      checkToken(req, trigger);
      return getHandshake(stored, providerRequest(req, deps));
    },
    provesCredential: trigger.auth !== undefined,
  });
  sendReply(res, reply);
}
