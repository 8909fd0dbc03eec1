/**
 * An event handler of a request's stream or parser that cannot end the process (contract
 * §2.9). Node calls such a handler from the emitter's own emit, outside any promise: unguarded,
 * whatever it throws (a malformed part busboy lets through, a bug) is an uncaught exception and
 * the process exits. Guarded, the throw goes to `fail`, which rejects that request alone (a
 * Refusal keeps its 4xx; anything else is rendered as 500 INTERNAL_ERROR and logged as a bug).
 */
export function guarded<A extends unknown[]>(fail: (error: unknown) => void, handler: (...args: A) => void): (...args: A) => void {
  return (...args: A) => {
    try {
      handler(...args);
    } catch (error) {
      fail(error);
    }
  };
}
