/**
 * `Date.prototype.toISOString` takes about 0.5 µs, and a busy process formats the same
 * millisecond many times over (a request's event time, its delivery log entry, its log line;
 * every answer's X-RateLimit-Reset within one window). A formatter remembers the last
 * millisecond it formatted; give each kind of time its own, so they do not take turns.
 */
export function isoFormatter(): (ms: number) => string {
  let lastMs = Number.NaN;
  let lastIso = '';
  return (ms) => {
    if (ms !== lastMs) {
      lastIso = new Date(ms).toISOString();
      lastMs = ms;
    }
    return lastIso;
  };
}
