/**
 * A store (Redis) could not answer: the request is a 503, send it again. Any other error
 * from a store is a bug and stays a 500.
 */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}
