/**
 * A clock that stands still until the test moves it, for tests of windows and expiries:
 * "a minute later" is one call, whatever the machine's speed, and nothing expires by itself
 * between two requests however slow they are.
 */
export class TestClock {
  private ms: number;
  private restore?: () => void;

  constructor(start = Date.now()) {
    this.ms = start;
  }

  /** For code that takes a clock (e.g. MemoryIdempotencyStore). */
  readonly now = (): number => this.ms;

  advance(ms: number): void {
    this.ms += ms;
  }

  /**
   * Makes Date.now() read this clock until uninstall(), for code that calls it itself
   * (express-rate-limit's MemoryStore). Only Date.now: timers and `new Date()` stay real.
   */
  install(): this {
    if (!this.restore) {
      const spy = jest.spyOn(Date, 'now').mockImplementation(this.now);
      this.restore = () => spy.mockRestore();
    }
    return this;
  }

  uninstall(): void {
    this.restore?.();
    this.restore = undefined;
  }
}
