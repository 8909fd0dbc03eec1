export type PublishFailure = 'timeout' | 'queue_full' | 'too_large' | 'unavailable' | 'topic_missing' | 'closed';

/**
 * Why a record was not acknowledged. Every reason but too_large means "send it again".
 * Sinks throw only this for a failure of what they write to; anything else they throw is a
 * bug, and the sender gets a 500 for it, never "retry later".
 */
export class PublishError extends Error {
  constructor(
    readonly reason: PublishFailure,
    message: string,
    /** The topic at fault (topic_missing), for the log and /readyz. */
    readonly topic?: string,
    /**
     * The sink may hold the record all the same: it was in a write that had not answered (or
     * another record of the call was acknowledged). Its stored objects must then stay (contract §12).
     */
    readonly sinkMayHold = false,
  ) {
    super(message);
    this.name = 'PublishError';
  }
}
