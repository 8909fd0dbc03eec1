export type PublishFailure = 'timeout' | 'queue_full' | 'too_large' | 'unavailable' | 'closed';

/** Why a record was not acknowledged. Every reason but too_large means "send it again". */
export class PublishError extends Error {
  constructor(
    readonly reason: PublishFailure,
    message: string,
  ) {
    super(message);
    this.name = 'PublishError';
  }
}
