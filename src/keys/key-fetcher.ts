import type { X509Certificate } from 'node:crypto';
import type { JSONWebKeySet } from 'jose';
import { allowedKeyUrl, type KeySource } from './allow-list';
import { BoundedCache } from './bounded-cache';
import { hasKid, MAX_TTL_MS, parseCertificate, parseCertificateChain, parseJwks, type Material } from './key-material';
import { resolvePublic, systemResolver, type Resolver } from './resolve';
import { dialChecked, KEY_FETCH_LIMITS, send, type Dial, type TransportLimits, type TransportResult } from './transport';

/** Label values of `igw_provider_key_fetch_total{preset,outcome}`. */
export type KeyFetchOutcome =
  | 'ok'
  | 'not_allowed'
  | 'disabled'
  | 'backoff'
  | 'busy'
  | 'dns_failed'
  | 'address_not_public'
  | 'timeout'
  | 'error'
  | 'status'
  | 'too_large'
  | 'invalid';

/** The metrics the fetcher reports; the wiring maps them onto prom-client. */
export interface KeyFetchMetrics {
  fetched(preset: string, outcome: KeyFetchOutcome): void;
  cacheHit(preset: string): void;
}

/** `key_url_not_allowed`: 401, nothing fetched; `key_unavailable`: 503 with Retry-After 2 (contract §10.E). */
export type KeyFailure = { ok: false; reason: 'key_url_not_allowed' | 'key_unavailable' };
export type KeyResult<T> = { ok: true; value: T; keySource: 'fetched' | 'cache' } | KeyFailure;

export interface KeyRequest {
  /** The preset asking (the metric's label). */
  preset: string;
  source: KeySource;
  url: string;
}

export interface KeyFetcherOptions {
  /** KEY_FETCH: false → nothing is fetched, a key not pinned is `key_unavailable`. */
  enabled: boolean;
  resolver?: Resolver;
  dial?: Dial;
  /** Roots to verify key hosts against; absent: the system's. */
  ca?: string | Buffer | Array<string | Buffer>;
  limits?: TransportLimits;
  metrics?: KeyFetchMetrics;
  /** Milliseconds; the cache's and the refresh limit's clock. */
  now?: () => number;
  maxEntries?: number;
  /** Roots the X.509 families chain to; absent: each family's production roots (tests inject their own, as `ca`). */
  trustAnchors?: TrustAnchors;
}

/** Per family: PayPal's signing chain (default Node's public roots), Apple's x5c (default Apple Root CA - G3). */
export interface TrustAnchors {
  paypal?: readonly X509Certificate[];
  appleAppStore?: readonly X509Certificate[];
}

const MAX_ENTRIES = 256;
/** An unknown `kid` refreshes a key set at most this often per source. */
export const KID_REFRESH_INTERVAL_MS = 60_000;
/** After a failure a source is not asked again for this long (the Retry-After the sender is given). */
export const FAILURE_BACKOFF_MS = 2_000;
/**
 * Fetches open at once per source. Senders choose SNS certificate names and Plaid kids, so
 * distinct misses could otherwise open one connection each; past this they wait for a retry.
 */
export const MAX_FETCHES_PER_SOURCE = 4;

type Parse<T> = (body: Buffer, headers: Record<string, string | string[] | undefined>, nowMs: number) => Material<T> | undefined;
type Cached = { value: unknown; fetchedAt: number };

const unavailable: KeyFailure = { ok: false, reason: 'key_unavailable' };
const notAllowed: KeyFailure = { ok: false, reason: 'key_url_not_allowed' };

/**
 * The one component that opens connections a delivery caused (contract §10.1 F). Only URLs on
 * the source's allow-list, only to public addresses checked before connecting, bounded in time
 * and size, cached per pod, one fetch for concurrent misses; a failure is `key_unavailable`
 * (503), never a refusal of the sender.
 */
export class KeyFetcher {
  private readonly cache: BoundedCache<Cached>;
  private readonly inFlight = new Map<string, Promise<KeyResult<unknown>>>();
  private readonly failedUntil: BoundedCache<true>;
  private readonly open = new Map<KeySource, number>();
  private readonly now: () => number;

  constructor(private readonly options: KeyFetcherOptions) {
    this.now = options.now ?? Date.now;
    this.cache = new BoundedCache(options.maxEntries ?? MAX_ENTRIES, this.now);
    this.failedUntil = new BoundedCache(options.maxEntries ?? MAX_ENTRIES, this.now);
  }

  /** The roots injected for the X.509 families, if any (production: none, each family's default). */
  get trustAnchors(): TrustAnchors {
    return this.options.trustAnchors ?? {};
  }

  /** A PEM certificate by URL (AWS SNS, PayPal), cached until its notAfter (at most 24 h). */
  certificate(request: KeyRequest): Promise<KeyResult<X509Certificate>> {
    return this.cached(request, () => false, (body, _headers, nowMs) => parseCertificate(body, nowMs)) as Promise<
      KeyResult<X509Certificate>
    >;
  }

  /**
   * A certificate already in the cache (fetched for an earlier delivery), or undefined: nothing is
   * fetched. AWS SNS verifies with it a topic the trigger does not list, for which it fetches nothing.
   */
  cachedCertificate(request: KeyRequest): KeyResult<X509Certificate> | undefined {
    if (!allowedKeyUrl(request.source, request.url)) return undefined;
    const entry = this.cache.get(cacheKey(request));
    if (entry === undefined) return undefined;
    this.options.metrics?.cacheHit(request.preset);
    return { ok: true, value: entry.value as X509Certificate, keySource: 'cache' };
  }

  /** A PEM chain by URL, leaf first (PayPal), cached until its first notAfter (at most 24 h). */
  certificateChain(request: KeyRequest): Promise<KeyResult<X509Certificate[]>> {
    return this.cached(request, () => false, (body, _headers, nowMs) => parseCertificateChain(body, nowMs)) as Promise<
      KeyResult<X509Certificate[]>
    >;
  }

  /**
   * A JWKS by URL (Google, Microsoft, Zoho), cached by Cache-Control (5 min–24 h). A `kid` the
   * cached set lacks refreshes it, at most once a minute per source; the caller still checks
   * that the `kid` is there.
   */
  jwks(request: KeyRequest & { kid?: string }): Promise<KeyResult<JSONWebKeySet>> {
    const { kid } = request;
    const stale = (entry: Cached) =>
      kid !== undefined && !hasKid(entry.value as JSONWebKeySet, kid) && this.now() - entry.fetchedAt >= KID_REFRESH_INTERVAL_MS;
    return this.cached(request, stale, (body, headers) => parseJwks(body, headers['cache-control'])) as Promise<
      KeyResult<JSONWebKeySet>
    >;
  }

  /** AWS SNS `SubscribeURL` (autoConfirm): one GET on the allow-list, never cached. */
  async confirmSubscription(request: { preset: string; url: string }): Promise<{ ok: true } | KeyFailure> {
    const result = await this.fetch({ ...request, source: 'aws-sns-subscribe' }, 'GET', undefined, () => ({ value: true, ttlMs: 0 }));
    return result.ok ? { ok: true } : result;
  }

  /**
   * A JSON answer of a POST (Plaid's `/webhook_verification_key/get`), cached `ttlMs` under
   * `cacheKey` (which must hold no secret; the JSON sent may); concurrent misses share one POST.
   */
  postJson(request: KeyRequest & { json: unknown; cacheKey: string; ttlMs: number }): Promise<KeyResult<unknown>> {
    const parse: Parse<unknown> = (body) => {
      try {
        return { value: JSON.parse(body.toString('utf8')) as unknown, ttlMs: Math.min(request.ttlMs, MAX_TTL_MS) };
      } catch {
        return undefined;
      }
    };
    return this.cached(request, () => false, parse, { json: request.json, cacheKey: request.cacheKey });
  }

  private async cached(
    request: KeyRequest,
    stale: (entry: Cached) => boolean,
    parse: Parse<unknown>,
    post?: { json: unknown; cacheKey: string },
  ): Promise<KeyResult<unknown>> {
    if (!allowedKeyUrl(request.source, request.url)) return this.refuse(request.preset, 'not_allowed', notAllowed);
    const key = cacheKey(request, post?.cacheKey);
    const entry = this.cache.get(key);
    if (entry !== undefined && !stale(entry)) {
      this.options.metrics?.cacheHit(request.preset);
      return { ok: true, value: entry.value, keySource: 'cache' };
    }
    const running = this.inFlight.get(key);
    if (running) return running;
    const fetching = this.fetch(request, post ? 'POST' : 'GET', post?.json, parse, (material) =>
      this.cache.set(key, { value: material.value, fetchedAt: this.now() }, material.ttlMs),
    ).finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, fetching);
    return fetching;
  }

  private async fetch(
    request: KeyRequest,
    method: 'GET' | 'POST',
    json: unknown,
    parse: Parse<unknown>,
    keep?: (material: Material<unknown>) => void,
  ): Promise<KeyResult<unknown>> {
    const url = allowedKeyUrl(request.source, request.url);
    if (!url) return this.refuse(request.preset, 'not_allowed', notAllowed);
    if (!this.options.enabled) return this.refuse(request.preset, 'disabled', unavailable);
    const backoffKey = `${request.source} ${url.origin}${url.pathname}`;
    if (this.failedUntil.get(backoffKey)) return this.refuse(request.preset, 'backoff', unavailable);
    const open = this.open.get(request.source) ?? 0;
    if (open >= MAX_FETCHES_PER_SOURCE) return this.refuse(request.preset, 'busy', unavailable);
    this.open.set(request.source, open + 1);
    let outcome: Awaited<ReturnType<KeyFetcher['exchange']>>;
    try {
      outcome = await this.exchange(url, method, json);
    } finally {
      this.open.set(request.source, (this.open.get(request.source) ?? 1) - 1);
    }
    const material = outcome.ok ? parse(outcome.body, outcome.headers, this.now()) : undefined;
    if (!material) {
      this.failedUntil.set(backoffKey, true, FAILURE_BACKOFF_MS);
      return this.refuse(request.preset, outcome.ok ? 'invalid' : outcome.outcome, unavailable);
    }
    keep?.(material);
    this.options.metrics?.fetched(request.preset, 'ok');
    return { ok: true, value: material.value, keySource: 'fetched' };
  }

  private async exchange(url: URL, method: 'GET' | 'POST', json: unknown): Promise<TransportResult | { ok: false; outcome: KeyFetchOutcome }> {
    const limits = this.options.limits ?? KEY_FETCH_LIMITS;
    const started = performance.now();
    const resolving = resolvePublic(url.hostname, this.options.resolver ?? systemResolver);
    const resolution = await withDeadline(resolving, Math.min(limits.connectTimeoutMs, limits.totalTimeoutMs));
    if (resolution === undefined) return { ok: false, outcome: 'timeout' };
    if (!resolution.ok) return resolution;
    // Resolving is part of connecting and of the whole exchange: the connection gets what is left of both.
    const spent = performance.now() - started;
    const left = { ...limits, connectTimeoutMs: limits.connectTimeoutMs - spent, totalTimeoutMs: limits.totalTimeoutMs - spent };
    if (left.connectTimeoutMs <= 0 || left.totalTimeoutMs <= 0) return { ok: false, outcome: 'timeout' };
    const { address, family } = resolution.target;
    return send({ url, address, family, method, json }, { dial: this.options.dial ?? dialChecked, limits: left, ca: this.options.ca });
  }

  private refuse(preset: string, outcome: KeyFetchOutcome, failure: KeyFailure): KeyFailure {
    this.options.metrics?.fetched(preset, outcome);
    return failure;
  }
}

/** Where a source's answer for a URL (and, for a POST, the caller's key) is cached. */
function cacheKey(request: KeyRequest, extra = ''): string {
  return `${request.source} ${request.url} ${extra}`;
}

/** The promise's value, or undefined once `ms` have passed. */
function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<undefined>((resolve) => (timer = setTimeout(resolve, ms, undefined)));
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
