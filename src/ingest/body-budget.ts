/**
 * Bytes of request bodies held in memory at once, across all requests of the process. Each
 * body is also parsed, base64'd and serialised, so what it holds is a few times its size:
 * the budget keeps the process's memory bounded however many uploads are in flight.
 */
export class BodyBudget {
  private used = 0;

  constructor(readonly max: number) {}

  get inUse(): number {
    return this.used;
  }

  tryTake(bytes: number): boolean {
    if (this.used + bytes > this.max) return false;
    this.used += bytes;
    return true;
  }

  give(bytes: number): void {
    this.used -= bytes;
  }
}
