import type { Config } from '../config/schema';
import type { DeliveryNotes } from '../http/context';
import { Refusal } from '../outcomes/refusal';
import type { BodyBudget, BodyLease } from '../ingest/body-budget';
import { classifyContentType } from '../body/content-type';
import { noRoom, type BodyRules } from '../ingest/read-body';
import { jsonParseCost } from '../body/safe-json';
import type { SignatureDiagnostics } from '../providers/diagnostics';
import type { Charge } from '../ratelimit/limit-info';
import type { Bucket, createRateLimiter, FailureCheck } from '../ratelimit/limiter';

/**
 * The budget counts a body's bytes and allows for its parsed form and event taking a few
 * times that (multipart's base64, the serialised record). Parsing JSON can take far more
 * (a 1 MB `[{},{},…]` is 21 MB of heap): whatever its estimate exceeds this allowance is
 * taken from the budget too.
 */
const PARSE_ALLOWANCE = 4;

/** What the gate is handed of the app's dependencies. */
export interface GateDeps {
  config: Pick<Config, 'BODY_MIN_RATE' | 'REQUEST_TIMEOUT_MS' | 'MAX_INFLIGHT_BODY_SHARE' | 'AUTH_FAILURE_LIMIT'>;
  enforceRateLimits: ReturnType<typeof createRateLimiter>;
  bodyBudget: BodyBudget;
}

export interface GateTarget {
  /** What the request opens (`trigger:<path>`, `channel:<name>:<id>`, `admin`): a key of failed authentications and of a body budget share. */
  target: string;
  /** The tenant: a key of a body budget share. */
  workspaceId?: string;
}

/**
 * The steps every ingress route takes, in this order, so nobody without a credential can
 * spend a tenant's resources:
 *
 *   1. `verify(check)` for each credential, as early as it can be checked: a token or a
 *      signature header before the body, a signature over the body after `readBody`. A client
 *      address that failed too often on this target is refused (429 `auth_throttled`) before
 *      its credential is looked at; each 401/403 counts as one more failure. Neither touches
 *      the tenant's quota.
 *   2. `charge(buckets)`: the tenant's rate limits, only once every credential has passed.
 *   3. `readBody(limit)`: the body under its fair share of the memory budget and the minimum
 *      transfer rate; `reserveParseMemory` before parsing.
 *
 * A check that needs the body (an HMAC) sits between `readBody` and `charge`.
 *
 * Nothing here speaks HTTP: the abstract members are the exchange, which the route implements
 * (src/routes/http-gate.ts), so one object per request carries both.
 */
export abstract class IngressGate {
  /** The client's address (a /56 for IPv6), as the route reads it. */
  abstract readonly client: string;
  private admitted?: Promise<void>;
  private lease?: BodyLease;

  constructor(
    private readonly deps: GateDeps,
    private readonly on: GateTarget,
  ) {}

  /** What this request's delivery log entry carries (contract §13). */
  abstract note(notes: DeliveryNotes): void;

  /** Shows a charge on the answer (its X-RateLimit-* headers), then throws its 429 when a bucket is spent. */
  protected abstract answerCharge(charge: Charge): void;

  /** The request's raw body, read under `rules`. */
  protected abstract readRaw(rules: BodyRules): Promise<Buffer>;

  /** Runs `hook` once the answer is done (sent, refused or cut off). */
  protected abstract whenDone(hook: () => void): void;

  /**
   * Runs a credential check that throws a 401/403 Refusal when it fails; returns what it returns.
   * A refused handshake (400 `invalid_handshake`) counts as a failed authentication too, on
   * every route, so nobody can use a handshake as an oracle at will.
   */
  async verify<T>(check: () => T | Promise<T>, diagnose?: () => SignatureDiagnostics): Promise<T> {
    this.admitted ??= this.admit();
    await this.admitted;
    try {
      return await check();
    } catch (error) {
      // A refused signature (or sender, or a key not to be had) says why in the delivery log (contract §13, §10.1 E), never what was expected.
      if (diagnose && error instanceof Refusal && (error.status === 401 || error.reason === 'sender_not_allowed' || error.reason === 'key_unavailable')) {
        this.note({ diagnostics: { ...diagnose() } });
      }
      if (error instanceof Refusal && (error.status === 401 || error.status === 403 || error.reason === 'invalid_handshake')) await this.countFailure();
      throw error;
    }
  }

  /** One more failed authentication of this client on this target (a refused handshake counts too). */
  private async countFailure(): Promise<void> {
    const { key, rule } = this.failureCheck();
    await this.deps.enforceRateLimits.authFailures.recordFailure(key, rule);
  }

  /**
   * `verify(check)` then `charge(buckets)` for a check that needs no I/O (a token, a secret
   * header), in one round trip to the stores instead of two (one command on Redis): the check
   * runs first; once it holds, the client's failed-authentication count is read together with
   * the tenant's buckets. A blocked client still gets 429 `auth_throttled` whether its
   * credential held or not, without the buckets' headers, so a guess made while refused tells
   * nothing; buckets it was charged were charged by a holder of the credential.
   */
  async verifyThenCharge(check: () => void, buckets: Bucket[]): Promise<void> {
    try {
      check();
    } catch (failed) {
      await this.verify(() => {
        throw failed;
      });
    }
    this.note({ authenticated: true });
    if (this.admitted) {
      await this.admitted;
      // charge() without its note: the request is noted authenticated just above.
      this.answerCharge(await this.deps.enforceRateLimits(buckets));
      return;
    }
    const { blockedUntil, ...charge } = await this.deps.enforceRateLimits.admitAndCharge(this.failureCheck(), buckets);
    if (!blockedUntil) this.answerCharge(charge);
    this.admitted = blockedUntil ? Promise.reject(throttled(blockedUntil)) : Promise.resolve();
    await this.admitted;
  }

  /** Counts the request against the tenant's buckets (429 when one is spent). */
  async charge(buckets: Bucket[]): Promise<void> {
    this.note({ authenticated: true });
    this.answerCharge(await this.deps.enforceRateLimits(buckets));
  }

  /** The raw body: at most `limit` bytes, held under this route's, workspace's and client's share of the budget. */
  readBody(limit: number): Promise<Buffer> {
    const { config } = this.deps;
    return this.readRaw({
      limit,
      lease: this.bodyLease(),
      minRate: config.BODY_MIN_RATE,
      timeoutMs: config.REQUEST_TIMEOUT_MS,
      counted: (bytes) => this.note({ bytes }),
    });
  }

  /** This request's share of the body budget (for a body read as a stream), given back when the response is done. */
  bodyLease(): BodyLease {
    if (this.lease) return this.lease;
    const { config, bodyBudget } = this.deps;
    const keys = [`route:${this.on.target}`, `client:${this.client}`];
    if (this.on.workspaceId !== undefined) keys.push(`workspace:${this.on.workspaceId}`);
    const lease = bodyBudget.lease(keys, Math.floor((bodyBudget.max * config.MAX_INFLIGHT_BODY_SHARE) / 100));
    this.lease = lease;
    this.whenDone(() => lease.release());
    return lease;
  }

  /**
   * Takes from the budget what parsing a JSON body will hold beyond the allowance: 503 or 429
   * when there is no room now, 413 `body_too_complex` when there never can be.
   */
  reserveParseMemory(raw: Buffer, contentType: string | undefined): void {
    if (!this.lease || classifyContentType(contentType)?.kind !== 'json') return;
    const extra = jsonParseCost(raw) - PARSE_ALLOWANCE * raw.length;
    if (extra <= 0) return;
    if (this.lease.held + extra > this.deps.bodyBudget.max) {
      throw new Refusal('body_too_complex', 'the JSON body would take too much memory to parse', {
        limit: 'MAX_INFLIGHT_BODY_BYTES',
      });
    }
    const refusal = this.lease.take(extra);
    if (refusal) throw noRoom(refusal);
  }

  private async admit(): Promise<void> {
    const { key, rule } = this.failureCheck();
    const until = await this.deps.enforceRateLimits.authFailures.blockedUntil(key, rule);
    if (until) throw throttled(until);
  }

  private failureCheck(): FailureCheck {
    return { key: `${this.on.target}|${this.client}`, rule: this.deps.config.AUTH_FAILURE_LIMIT };
  }
}

function throttled(until: Date): Refusal {
  return new Refusal('auth_throttled', 'too many failed authentications from this address; try again later', {}, { retryAt: until });
}
