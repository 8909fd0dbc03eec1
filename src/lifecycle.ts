/** Every adapter has the same lifecycle; close() is safe twice and safe without start(). */
export interface Lifecycle {
  start(): Promise<void>;
  /** Resolves when the dependency is reachable, rejects with a short reason otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** A shared dependency (Redis, the sink, the triggers file), reported by /readyz and the metrics. */
export interface DependencyCheck {
  name: string;
  /** Resolves when the dependency answers; rejects with a short reason (no secret) otherwise. */
  ping(): Promise<void>;
  /** While it answers: a state short of "up" (e.g. `topic_missing`), and facts for /readyz's body. */
  report?(): { state?: string; detail?: Record<string, unknown> };
}

/** This process's own state: /readyz is 200 only while it is started and not draining. */
export interface ProcessState {
  started: boolean;
  draining: boolean;
}
