import type { Request } from 'express';
import { Refusal } from '../outcomes/refusal';
import type { StoredTrigger } from '../registry/schemas';
import { secretMatches } from '../security';

/**
 * A trigger's `auth`: the bearer token, or the trigger's own header only when it names one
 * (contract §2.3). Checked on every request a trigger answers, a provider's handshakes
 * included: `auth` and `provider` combined must both pass (contract §10).
 */
export function checkToken(req: Request, trigger: StoredTrigger): void {
  if (!trigger.auth) return;
  const presented = trigger.auth.header ? req.get(trigger.auth.header) : bearerToken(req.get('authorization'));
  if (!secretMatches(presented, trigger.auth.tokenHash)) {
    throw new Refusal('credentials_invalid', 'missing or invalid credentials', undefined, trigger.auth.header ? {} : { challenge: 'Bearer' });
  }
}

export function bearerToken(header: string | undefined): string | undefined {
  const match = header?.match(/^Bearer[ \t]+(\S+)\s*$/i);
  return match?.[1];
}
