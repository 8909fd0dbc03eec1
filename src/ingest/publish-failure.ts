import { HttpError } from '../http/errors';
import { PublishError } from '../publish/errors';

export const RETRY_AFTER_SECONDS = '2';

/** What the sender is told when its event was not acknowledged. */
export function publishFailureToHttp(error: unknown): HttpError {
  if (error instanceof PublishError && error.reason === 'too_large') {
    return new HttpError('PAYLOAD_TOO_LARGE', 'the event exceeds the largest record the sink accepts', {
      limit: 'the published record',
    });
  }
  const reason = error instanceof PublishError ? error.reason : 'unavailable';
  return new HttpError('SERVICE_UNAVAILABLE', 'the event could not be stored; send it again', { reason }, {
    'Retry-After': RETRY_AFTER_SECONDS,
  });
}
