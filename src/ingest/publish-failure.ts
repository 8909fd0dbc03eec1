import { Refusal } from '../outcomes/refusal';
import type { Reason } from '../outcomes/reasons';
import { PublishError, type PublishFailure } from '../publish/errors';

const RETRYABLE_REASON: Record<Exclude<PublishFailure, 'too_large'>, Reason> = {
  timeout: 'timeout',
  queue_full: 'queue_full',
  unavailable: 'sink_unavailable',
  closed: 'closed',
  topic_missing: 'topic_missing',
};

/**
 * What the sender is told when its event was not acknowledged. Anything but a PublishError is
 * a bug, not an outage: it is rethrown as is (500), so a sender is never told to retry it.
 */
export function publishRefusal(error: unknown): Error {
  if (!(error instanceof PublishError)) return error instanceof Error ? error : new Error(String(error));
  if (error.reason === 'too_large') {
    return new Refusal('record_too_large', 'the event exceeds the largest record the sink accepts', {
      limit: 'the published record',
    });
  }
  return new Refusal(RETRYABLE_REASON[error.reason], 'the event could not be stored; send it again', {});
}
