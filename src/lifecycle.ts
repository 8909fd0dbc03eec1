/** Every adapter has the same lifecycle; close() is safe twice and safe without start(). */
export interface Lifecycle {
  start(): Promise<void>;
  /** Resolves when the dependency is reachable, rejects with a short reason otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
