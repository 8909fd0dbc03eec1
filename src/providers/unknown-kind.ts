import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';

/** Longest kind written to a log line (a kind is the sender's text). */
const MAX_LOGGED = 256;

/**
 * A verified delivery whose kind the catalogue does not list (contract §10 `unknown_kind`): it is
 * still published unless a glob excludes it, but the catalogue (and so every filter written
 * from it) is behind the sender, which an operator needs to hear about.
 */
export function reportUnknownKind(provider: string, kind: string, metrics: Metrics, logger: Logger | undefined): void {
  metrics.providerUnknownKinds.inc({ provider });
  logger?.warn({ provider, kind: kind.slice(0, MAX_LOGGED), reason: 'unknown_kind' }, 'a provider delivery has a kind the catalogue does not list');
}
