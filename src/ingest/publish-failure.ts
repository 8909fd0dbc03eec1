import { HttpError } from '../http/errors';
import { PublishError } from '../publish/errors';

export const RETRY_AFTER_SECONDS = '2';

/**
 * What the sender is told when its event was not acknowledged. Anything but a PublishError is
 * a bug, not an outage: it is rethrown as is (500), so a sender is never told to retry it.
 */
export function publishFailureToHttp(error: unknown): Error {
  if (!(error instanceof PublishError)) return error instanceof Error ? error : new Error(String(error));
  if (error.reason === 'too_large') {
    return new HttpError('PAYLOAD_TOO_LARGE', 'the event exceeds the largest record the sink accepts', {
      limit: 'the published record',
    });
  }
  return new HttpError('SERVICE_UNAVAILABLE', 'the event could not be stored; send it again', { reason: error.reason }, {
    'Retry-After': RETRY_AFTER_SECONDS,
  });
}
