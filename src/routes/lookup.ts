import { Refusal } from '../outcomes/refusal';
import type { Collection } from '../registry/registry';
import { SecretUnreadableError } from '../secrets/cipher';
import { StoreUnavailableError } from '../store-error';

/** Runs a registry call; a registry that cannot answer is a 503 (send it again), never a 404 or 500. */
export async function registryCall<T>(operation: Promise<T>): Promise<T> {
  try {
    return await operation;
  } catch (error) {
    if (!(error instanceof StoreUnavailableError)) throw error;
    if (error instanceof SecretUnreadableError) {
      throw new Refusal('secret_unreadable', 'a stored secret of this trigger or channel cannot be opened', {});
    }
    throw new Refusal('registry_unavailable', 'the registry is unavailable', {});
  }
}

export function lookup<T>(collection: Collection<T>, id: string): Promise<T | undefined> {
  return registryCall(collection.get(id));
}
