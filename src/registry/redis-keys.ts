import { StoreUnavailableError } from '../store-error';

export type Kind = 'triggers' | 'channels';

/**
 * The registry's keys. A change writes a collection's hash and id set and the version counter
 * in one script, so on a Redis Cluster they share the hash tag `{registry}` (one slot). On a
 * single Redis the names stay as they always were: no rename on upgrade.
 */
export function registryKeys(prefix: string, clustered: boolean) {
  const base = `${prefix}${clustered ? '{registry}' : 'registry'}`;
  return {
    hash: (kind: Kind) => `${base}:${kind}`,
    ids: (kind: Kind) => `${base}:${kind}:ids`,
    version: `${base}:version`,
    fileHash: `${base}:triggers-file:sha256`,
    /** A pub/sub channel, not a key: no slot. */
    changes: `${prefix}registry:changes`,
  };
}

export type RegistryKeys = ReturnType<typeof registryKeys>;

/** A failed Redis call as the routes know it: a 503 whose message starts with `redis: `. */
export function redisError(error: unknown): StoreUnavailableError {
  const message = error instanceof Error ? error.message : String(error);
  return new StoreUnavailableError(message.startsWith('redis: ') ? message : `redis: ${message}`, { cause: error });
}
