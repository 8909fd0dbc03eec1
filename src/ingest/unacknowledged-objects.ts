import type { RequestUploads } from '../files/request-uploads';
import type { Metrics } from '../observability/metrics';
import { PublishError } from '../publish/errors';

/**
 * The stored objects of an event that was not acknowledged (contract §12): deleted, unless the
 * sink may still hold the event (its write had not answered when the publish failed). Deleting
 * them then could leave a published event pointing at nothing; they are left for the bucket's
 * lifecycle rule instead, and counted.
 */
export function dropUnacknowledgedObjects(metrics: Metrics, uploads: RequestUploads | undefined, error: unknown): void {
  if (!uploads) return;
  if (error instanceof PublishError && error.sinkMayHold) {
    metrics.fileObjectsKept.inc(uploads.count);
    return;
  }
  void uploads.discard(error);
}
