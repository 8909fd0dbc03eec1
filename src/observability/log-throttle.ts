/**
 * Remembers when a line of each key was last written, so that a repeated one (an outage, a
 * sender retrying against a broken record) is written once per window, not once per event.
 */
export class LogThrottle {
  private readonly logged = new Map<string, number>();

  /**
   * @param windowMs the same key is let through at most once in this window
   * @param maxKeys past this many keys everything is forgotten (a bound on memory, not on lines)
   */
  constructor(
    private readonly windowMs: number,
    private readonly maxKeys: number,
  ) {}

  /** True when no line of this key was let through within the window (and records this one). */
  firstInWindow(key: string): boolean {
    const now = Date.now();
    const last = this.logged.get(key);
    if (last !== undefined && now - last < this.windowMs) return false;
    if (this.logged.size > this.maxKeys) this.logged.clear();
    this.logged.set(key, now);
    return true;
  }
}
