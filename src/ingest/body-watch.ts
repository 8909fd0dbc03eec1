/** A body being read, looked at by the shared sweep. */
export interface WatchedBody {
  /** Called on every sweep with the current time (Date.now()). */
  check(now: number): void;
}

/**
 * How often the bodies being read are looked at. A body's deadline or minimum rate is enforced
 * at most this late; the windows are seconds (BODY_MIN_RATE) and the deadline is at least
 * 100 ms (REQUEST_TIMEOUT_MS).
 */
export const SWEEP_MS = 50;

const watched = new Set<WatchedBody>();
let sweep: NodeJS.Timeout | undefined;

/**
 * One timer for every body being read, instead of a rate check and a deadline timer per
 * request: creating and clearing two timers per request cost more than the sweep. The timer
 * runs only while some body is being read. Returns the function that stops watching.
 */
export function watchBody(body: WatchedBody): () => void {
  watched.add(body);
  sweep ??= setInterval(checkAll, SWEEP_MS);
  return () => void watched.delete(body);
}

function checkAll(): void {
  const now = Date.now();
  for (const body of watched) body.check(now);
  if (watched.size === 0 && sweep) {
    clearInterval(sweep);
    sweep = undefined;
  }
}
