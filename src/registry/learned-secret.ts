import { Refusal } from '../outcomes/refusal';
import type { Collection } from './registry';
import type { StoredTrigger } from './schemas';

/**
 * Stores the secret a handshake taught (Asana's X-Hook-Secret) in the trigger, where the
 * registry seals it like any provider secret. The trigger is read again first: when an admin
 * PUT or another handshake changed it since this request looked it up, this handshake is
 * refused like any second one (re-keying needs an admin PUT). `updatedAt` stays the admin PUT's.
 */
export async function storeLearnedSecret(triggers: Collection<StoredTrigger>, path: string, seen: StoredTrigger, secret: string): Promise<void> {
  const current = await triggers.get(path);
  const provider = current?.provider;
  if (!current || !provider || current.updatedAt !== seen.updatedAt || provider.secrets.length > 0) {
    throw new Refusal('verification_failed', 'the trigger already has a secret, or changed since: re-key it with an admin PUT');
  }
  const { handshakeArmedAt: _armed, ...options } = provider.options ?? {};
  const { options: _previous, ...rest } = provider;
  await triggers.put(path, { ...current, provider: { ...rest, secrets: [secret], ...(Object.keys(options).length > 0 && { options }) } });
}
