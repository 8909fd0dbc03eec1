import type { Config } from '../config/schema';
import type { Metrics } from '../observability/metrics';
import { KeyFetcher, type KeyFetcherOptions } from './key-fetcher';

/**
 * The one key fetcher of a process (contract §10.1 F): KEY_FETCH decides whether it fetches,
 * its outcomes are `igw_provider_key_fetch_total{preset,outcome}` and its cache hits
 * `igw_provider_key_cache_hits_total{preset}`. Tests pass a resolver, dial, CA and trust anchors of their own.
 */
export function processKeyFetcher(
  config: Pick<Config, 'KEY_FETCH'>,
  metrics: Pick<Metrics, 'providerKeyFetches' | 'providerKeyCacheHits'>,
  transport: Pick<KeyFetcherOptions, 'resolver' | 'dial' | 'ca' | 'limits' | 'trustAnchors'> = {},
): KeyFetcher {
  return new KeyFetcher({
    enabled: config.KEY_FETCH === 'on',
    ...transport,
    metrics: {
      fetched: (preset, outcome) => metrics.providerKeyFetches.inc({ preset, outcome }),
      cacheHit: (preset) => metrics.providerKeyCacheHits.inc({ preset }),
    },
  });
}

/** What keyFetcherOf reads of the app's dependencies (AppDeps). */
export interface KeyFetcherDeps {
  keyFetcher?: KeyFetcher;
  config: Pick<Config, 'KEY_FETCH'>;
  metrics: Pick<Metrics, 'providerKeyFetches' | 'providerKeyCacheHits'>;
}

const BUILT = new WeakMap<KeyFetcherDeps, KeyFetcher>();

/** The deps' key fetcher; deps built without one (some tests) get one from their config, once. */
export function keyFetcherOf(deps: KeyFetcherDeps): KeyFetcher {
  if (deps.keyFetcher) return deps.keyFetcher;
  let built = BUILT.get(deps);
  if (!built) BUILT.set(deps, (built = processKeyFetcher(deps.config, deps.metrics)));
  return built;
}
