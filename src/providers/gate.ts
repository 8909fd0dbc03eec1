import type { IncomingHttpHeaders } from 'node:http';
import { methodNotAllowed, Refusal } from '../outcomes/refusal';
import { sha256Hex } from '../security';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import type { Acknowledgement, Authenticates, HandshakeAnswer, Provider, Reply, SignatureReason } from './provider';
import { authenticatesOf, isKnownKind } from './catalogue';
import { eventFilter, MAX_KIND_LENGTH } from './event-filter';
import { reportUnknownKind } from './unknown-kind';
import { providerNamed } from './registry';
import { effectiveTolerance, type StoredProvider } from './trigger-field';
import { rawJson } from './body';
import { signatureDiagnostics, type SignatureDiagnostics } from './diagnostics';
import { checkSenderBodyType } from './body-type';
import type { KeyFetcher } from '../keys/key-fetcher';
import type { FamilyResult } from './families/result';
import { familyDiagnostics, familyRefusal } from './family-gate';
import { acknowledgementReply } from './acknowledgement';

/** What the gate needs to know of an HTTP request; the route builds it (nothing here imports express). */
export interface ProviderRequest {
  headers: IncomingHttpHeaders;
  query: Record<string, unknown>;
  /** The public URL as the sender called it: PUBLIC_BASE_URL (else the Host) + path + query, as sent. */
  url: string;
}

/** `data.provider` of the published event (contract §10). */
export interface PublishedProvider {
  name: string;
  kind: string;
  deliveryId: string | null;
  verified: true;
  /** What the signature covers (contract §10.A 8). */
  authenticates: Authenticates;
  /** The fields a `fields` preset's signature covers (contract §10.H). */
  signedFields?: readonly string[];
}

export type Classified =
  | { ignored: true; kind: string }
  | {
      ignored: false;
      deliveryId?: string;
      /**
       * Contract §5: the scheme signs no delivery id or no timestamp, so a replay could pass
       * as new under another id header: the body's hash, with its kind, is claimed too.
       */
      claimsBody: boolean;
      published: PublishedProvider;
      hiddenHeaders: readonly string[];
      /** A value the family says to claim once beside the delivery id (Mailgun's token), hashed: seen before → a replay. */
      claimOnce?: string;
    };

/** An acknowledgement from the accept path, or a delivery filtered out by `events`. */
export type ProviderAck =
  | { status: number; body: unknown; eventId: string; replayed: boolean }
  | { ignored: true; kind: string };

const REASON_MESSAGES: Record<SignatureReason, string> = {
  signature_missing: 'the request carries no usable signature',
  signature_invalid: 'the signature does not match',
  timestamp_out_of_tolerance: 'the signed timestamp is outside the tolerance',
  timestamp_missing: 'the signed material carries no timestamp',
};

export function signatureRefused(reason: SignatureReason): Refusal {
  return new Refusal(reason, REASON_MESSAGES[reason]);
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** A handshake's answer as the reply, or 403 / 400 (a challenge the gateway will not echo). */
export function handshakeReply(answer: HandshakeAnswer): Reply {
  if (answer === 'forbidden') throw new Refusal('verification_failed', 'the verify token does not match');
  if (answer === 'signature_missing' || answer === 'signature_invalid') throw signatureRefused(answer);
  if (answer === 'invalid') throw new Refusal('invalid_handshake', 'the challenge is not one the gateway answers (too long, or characters the provider never sends)');
  return answer;
}

/**
 * A GET on a trigger path: the GET handshake of the trigger's provider (Meta, Dropbox, X), and
 * nothing else. Every other GET gets the same 405 as any other method, whether the trigger
 * exists or not (no probing).
 */
export function hasGetHandshake(stored: StoredProvider | undefined): boolean {
  return stored !== undefined && providerNamed(stored.name)?.handshake?.method === 'GET';
}

export function getHandshake(stored: StoredProvider | undefined, request: ProviderRequest): Reply {
  const provider = stored && providerNamed(stored.name);
  const handshake = provider?.handshake;
  if (!stored || !handshake || handshake.method !== 'GET') throw methodNotAllowed();
  const answer = handshake.answer({
    query: request.query,
    headers: request.headers,
    body: undefined,
    secret: stored.secrets[0],
    secrets: stored.secrets,
    options: stored.options ?? {},
  });
  if (answer === undefined) throw methodNotAllowed();
  return handshakeReply(answer);
}

/**
 * One signed delivery through its provider's checks, in the order the contract asks: an
 * unsigned POST handshake and the header checks before the body is read; the signature over
 * the raw bytes before anything is parsed, charged or published; then the kind, the filter,
 * the delivery id and the acknowledgement the sender expects.
 */
export class ProviderGate {
  constructor(
    readonly provider: Provider,
    private readonly stored: StoredProvider,
    private readonly request: ProviderRequest,
    private readonly metrics: Metrics,
    private readonly logger?: Logger,
    private readonly keys?: KeyFetcher,
  ) {}

  /** What verifyFamily answered (contract §10.1 D presets): its kind and id, and the log's diagnostics. */
  private family?: FamilyResult;

  /** The body as received, once its signature held: some kinds are read from it (Slack's form `payload`). */
  private verifiedRaw?: Buffer;

  private head() {
    return {
      headers: this.request.headers,
      query: this.request.query,
      url: this.request.url,
      secrets: this.stored.secrets,
      publicKeys: this.stored.publicKeys ?? [],
      options: this.stored.options ?? {},
      toleranceSeconds: effectiveTolerance(this.stored),
      nowSeconds: nowSeconds(),
    };
  }

  /** Before the body is read: Graph's validation answer, or a 401 from the headers alone. */
  beforeBody(): Reply | undefined {
    const handshake = this.provider.handshake;
    if (handshake && handshake.method === 'POST' && !handshake.signed) {
      const answer = handshake.answer({
        query: this.request.query,
        headers: this.request.headers,
        body: undefined,
        secret: this.stored.secrets[0],
        secrets: this.stored.secrets,
        options: this.stored.options ?? {},
        nowSeconds: nowSeconds(),
      });
      if (answer !== undefined) return handshakeReply(answer);
    }
    const reason = this.provider.precheck(this.head());
    if (reason) throw signatureRefused(reason);
    return undefined;
  }

  /** On the raw bytes, before parsing or charging: 401, or a signed handshake's answer (Slack, Zoom). */
  afterBody(raw: Buffer): Reply | undefined | Promise<Reply | undefined> {
    if (this.provider.verifyFamily) return this.afterFamily(raw);
    const result = this.provider.verify({ ...this.head(), raw });
    if (!result.ok) throw signatureRefused(result.reason);
    this.verifiedRaw = raw;
    const handshake = this.provider.handshake;
    if (!handshake || handshake.method !== 'POST' || !handshake.signed) return undefined;
    const answer = handshake.answer({ query: this.request.query, headers: this.request.headers, body: rawJson(raw), secret: result.secret, options: this.stored.options ?? {} });
    return answer === undefined ? undefined : handshakeReply(answer);
  }

  /** afterBody for a preset that may wait for a key: its refusal (401/403/503), or its own answer to a verified request. */
  private async afterFamily(raw: Buffer): Promise<Reply | undefined> {
    const keys = this.keys;
    if (!keys) throw new Error(`${this.provider.name} needs the key fetcher`);
    const request = { ...this.head(), raw };
    const result = await this.provider.verifyFamily!(request, keys);
    this.family = result;
    if (!result.ok) throw familyRefusal(result.reason);
    this.verifiedRaw = raw;
    const answer = await this.provider.answerVerified?.(request, keys);
    if (answer === 'key_unavailable') throw familyRefusal(answer);
    return answer === undefined ? undefined : handshakeReply(answer);
  }

  /** Once verified, before parsing: 415 for a body of another type than the sender posts (Twilio, Meta, Telegram). */
  checkBodyType(raw: Buffer, contentType: string | undefined): void {
    checkSenderBodyType(this.provider, raw, contentType, this.request.url);
  }

  /** The Content-Type the verified body is parsed as: JSON for a sender that labels its JSON text/plain (AWS SNS). */
  parseType(contentType: string | undefined): string | undefined {
    if (!this.provider.textIsJson || !contentType || !/^\s*text\/plain\b/i.test(contentType)) return contentType;
    return 'application/json; charset=utf-8';
  }

  /** The verified delivery's kind, the same on a trigger and a channel route: 400 when too long, reported when the catalogue lacks it. */
  kindOf(headers: IncomingHttpHeaders, body: unknown): string {
    const kind = (this.family?.ok ? this.family.kind : undefined) ?? this.provider.kind(headers, body, this.verifiedRaw, this.stored.options ?? {});
    if (kind.length > MAX_KIND_LENGTH) {
      throw new Refusal('kind_too_long', `the event kind is longer than ${MAX_KIND_LENGTH} characters`, { length: kind.length });
    }
    if (!isKnownKind(this.provider.name, kind)) reportUnknownKind(this.provider.name, kind, this.metrics, this.logger);
    return kind;
  }

  /** `events` lets the kind through: absent lets every kind but a ping through, and a ping only when a glob lists it. */
  private wanted(kind: string): boolean {
    const filter = this.stored.events && eventFilter(this.stored.events);
    if (this.provider.pings?.includes(kind)) return filter ? filter.lists(kind) : false;
    return filter ? filter.includes(kind) : true;
  }

  /** After parsing: the kind, whether `events` lets it through, and what is published. */
  classify(headers: IncomingHttpHeaders, body: unknown): Classified {
    const kind = this.kindOf(headers, body);
    if (!this.wanted(kind)) {
      this.metrics.providerEventsIgnored.inc({ provider: this.provider.name });
      return { ignored: true, kind };
    }
    const options = this.stored.options ?? {};
    const family = this.family?.ok ? this.family : undefined;
    const deliveryId = family?.deliveryId ?? this.provider.deliveryId(headers, body, this.verifiedRaw, options);
    this.provider.stripSecrets?.(body);
    const from = this.provider.deliveryIdFrom;
    const signedId = (typeof from === 'function' ? from(options) : from) === 'signed';
    return {
      ignored: false,
      deliveryId,
      claimsBody: !(signedId && signsTimestamp(this.provider, this.stored)),
      published: {
        name: this.provider.name,
        kind,
        deliveryId: deliveryId ?? null,
        verified: true,
        authenticates: authenticatesOf(this.provider),
        ...(this.provider.signedFields && { signedFields: this.provider.signedFields }),
      },
      hiddenHeaders: this.provider.signatureHeaders(this.stored.options ?? {}),
      ...(family?.claimKey !== undefined && { claimOnce: sha256Hex(family.claimKey) }),
    };
  }

  /** For the delivery log: what a refused delivery's signature looked like (never a secret or the expected signature). */
  diagnose(raw?: Buffer): SignatureDiagnostics {
    const options = this.stored.options ?? {};
    const shape = {
      scheme: this.provider.name,
      signatureHeaders: this.provider.signatureHeaders(options),
      timestampHeader: this.provider.timestampHeader?.(options) ?? (typeof options.timestampHeader === 'string' ? options.timestampHeader : undefined),
      secrets: this.stored.secrets.length + (this.stored.publicKeys?.length ?? 0),
      toleranceSeconds: effectiveTolerance(this.stored),
    };
    const diagnostics = signatureDiagnostics(shape, this.request.headers, { raw, nowSeconds: nowSeconds() });
    return this.family ? { ...diagnostics, ...familyDiagnostics(this.provider, this.family) } : diagnostics;
  }

  /** The sender's acknowledgement: Slack an empty 200, Twilio empty TwiML, others contract §2. */
  reply(ack: ProviderAck): Reply & { outcome: 'ignored' | 'accepted' | 'duplicate' } {
    if ('ignored' in ack) {
      return { ...this.formatted(200, { message: 'Webhook event ignored', kind: ack.kind }), outcome: 'ignored' };
    }
    const headers: Record<string, string> = { 'X-Event-Id': ack.eventId, ...(ack.replayed && { 'Idempotent-Replayed': 'true' }) };
    const reply = this.formatted(ack.status, ack.body, ack.eventId);
    return { ...reply, headers: { ...reply.headers, ...headers }, outcome: ack.replayed ? 'duplicate' : 'accepted' };
  }

  private acknowledgement(): Acknowledgement | undefined {
    const ack = this.provider.acknowledgement;
    return typeof ack === 'function' ? ack(this.stored.options ?? {}) : ack;
  }

  private formatted(status: number, body: unknown, eventId?: string): Reply {
    return acknowledgementReply(this.acknowledgement(), status, body, eventId);
  }
}

/** Whether the trigger's scheme signs a timestamp (checked against its tolerance). */
export function signsTimestamp(provider: Provider, stored: StoredProvider): boolean {
  const signs = provider.signsTimestamp;
  return typeof signs === 'function' ? signs(stored.options ?? {}) : signs === true;
}

/**
 * How long a signed delivery stays fresh: its tolerance when the scheme signs a timestamp, else
 * 0. Idempotency windows are raised to it (contract §5), so a replay is never new while its
 * signature would still pass.
 */
export function signatureFreshnessSeconds(stored: StoredProvider | undefined): number {
  const provider = stored && providerNamed(stored.name);
  return provider && stored && signsTimestamp(provider, stored) ? effectiveTolerance(stored) : 0;
}

export function openGate(stored: StoredProvider | undefined, request: ProviderRequest, metrics: Metrics, logger?: Logger, keys?: KeyFetcher): ProviderGate | undefined {
  const provider = stored && providerNamed(stored.name);
  return provider && stored ? new ProviderGate(provider, stored, request, metrics, logger, keys) : undefined;
}
