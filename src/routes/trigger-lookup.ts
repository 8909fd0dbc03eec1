import type { Response } from 'express';
import type { AppDeps } from '../app-deps';
import type { Config } from '../config/schema';
import { logTarget } from '../delivery-log/delivery-log';
import { noteDelivery } from '../http/delivery-notes';
import { Refusal } from '../outcomes/refusal';
import type { Bucket } from '../ratelimit/limiter';
import { PATH_PATTERN, type StoredTrigger } from '../registry/schemas';
import { lookup } from './lookup';

/** The trigger at `path`, noted as the delivery log's target when it is registered (contract §13). */
export async function registeredTrigger(deps: AppDeps, path: string, res: Response): Promise<StoredTrigger | undefined> {
  const trigger = PATH_PATTERN.test(path) ? await lookup(deps.registry.triggers, path) : undefined;
  if (trigger) noteDelivery(res, { target: logTarget('trigger', path, trigger) });
  return trigger;
}

/** The deployed trigger at `path`, or 404 (undeployed is as unknown as never registered). */
export async function deployedTrigger(deps: AppDeps, path: string, res: Response): Promise<StoredTrigger> {
  const trigger = await registeredTrigger(deps, path, res);
  if (!trigger || !trigger.deployed) throw new Refusal('not_found', 'no such trigger');
  return trigger;
}

/** The buckets a trigger's requests are charged to: its own and its workspace's (contract §6). */
export function triggerBuckets(config: Config, path: string, trigger: StoredTrigger): Bucket[] {
  return [
    { kind: 'trigger', id: path, ...(trigger.rateLimit ?? config.RATE_LIMIT_DEFAULT) },
    { kind: 'workspace', id: trigger.workspaceId, ...config.RATE_LIMIT_WORKSPACE },
  ];
}
