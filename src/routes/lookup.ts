import type { AppDeps } from '../app-deps';
import { HttpError } from '../http/errors';
import { RETRY_AFTER_SECONDS } from '../ingest/publish-failure';
import type { Collection } from '../registry/registry';

/** Reads the registry; a registry that cannot answer is a 503 (retry), never a 404. */
export async function lookup<T>(deps: AppDeps, collection: Collection<T>, id: string): Promise<T | undefined> {
  try {
    return await collection.get(id);
  } catch (error) {
    deps.logger.warn({ err: (error as Error).message }, 'registry lookup failed');
    throw new HttpError('SERVICE_UNAVAILABLE', 'the registry is unavailable', { reason: 'registry' }, {
      'Retry-After': RETRY_AFTER_SECONDS,
    });
  }
}
