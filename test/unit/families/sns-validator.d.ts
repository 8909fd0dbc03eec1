/** sns-validator 0.3.5 ships no types: the part the tests use. */
declare module 'sns-validator' {
  export default class MessageValidator {
    constructor(hostPattern?: RegExp, encoding?: string);
    validate(message: Record<string, unknown> | string, callback: (error: Error | null, message?: Record<string, unknown>) => void): void;
  }
}
