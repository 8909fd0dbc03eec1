import type { IncomingHttpHeaders } from 'node:http';
import type { z } from 'zod';
import type { BodyKind } from '../body/content-type';
import type { ChannelApi, ChannelRecord, StoredChannel } from './channel-record';
import type { ChatMapping, ChatProvider } from './chat-event';
import type { PublicKeyAlgorithm } from './recipe/public-keys';
import type { KeyFetcher } from '../keys/key-fetcher';
import type { FamilyResult } from './families/result';

export type Acknowledgement = 'empty' | 'twiml' | 'no-content' | 'deferred-interaction' | 'accepted-text';

/**
 * Why a signed delivery was refused (401, `details.reason`, src/outcomes/reasons.ts): no usable
 * signature (absent or malformed), a well-formed one that does not match, a stale one, or
 * none of the signed timestamp the scheme requires.
 */
export type SignatureReason = 'signature_missing' | 'signature_invalid' | 'timestamp_out_of_tolerance' | 'timestamp_missing';

/** What a preset sees of a request before its body is read. */
export interface RequestHead {
  headers: IncomingHttpHeaders;
  query: Record<string, unknown>;
  /** The public URL as the sender called it (PUBLIC_BASE_URL + path + query); Twilio signs it. */
  url: string;
  secrets: readonly string[];
  /** The trigger's public keys as written (contract §10.1 B), for public-key schemes. */
  publicKeys?: readonly string[];
  options: Record<string, unknown>;
  /** 0: the scheme's timestamp is not checked (its retries keep the first one and the trigger set no tolerance). */
  toleranceSeconds: number;
  nowSeconds: number;
}

/** The same, with the body's raw bytes. */
export interface SignedRequest extends RequestHead {
  raw: Buffer;
}

/** `ok` names the secret that verified (Zoom's handshake answers with it; empty for a public key). */
export type VerifyResult = { ok: true; secret: string } | { ok: false; reason: SignatureReason };

/** An answer written as is: a handshake. */
export interface Reply {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** A secret the handshake taught the gateway (Asana's X-Hook-Secret): the route stores it (sealed) before answering. */
  learnedSecret?: string;
}

/**
 * `forbidden`: a wrong verify token (403); `invalid`: a challenge the gateway will not echo
 * (400); a signature reason: a handshake that carries the trigger's token checks it (Okta): 401.
 */
export type HandshakeAnswer = Reply | 'forbidden' | 'invalid' | 'signature_missing' | 'signature_invalid';

export interface Handshake {
  /** GET handshakes are unsigned; POST ones are either unsigned (Graph) or signed (Slack, Zoom). */
  method: 'GET' | 'POST';
  /** Signed handshakes are answered after the signature check, with the parsed JSON body. */
  signed: boolean;
  /** One line for the catalogue. */
  describe: string;
  /** undefined: this request is not the handshake. */
  answer(input: {
    query: Record<string, unknown>;
    headers?: IncomingHttpHeaders;
    body: unknown;
    secret: string;
    /** Every secret of the trigger (two while rotating), for a handshake that checks a token itself. */
    secrets?: readonly string[];
    nowSeconds?: number;
    options: Record<string, unknown>;
  }): HandshakeAnswer | undefined;
}

/** Who a chat channel is registered for, as its mapper and its dedupe keys see it. */
export interface ChannelRef {
  channelId: string;
  workspaceId: string;
  inboxId: string;
  /** The number, account or bot the channel receives for (phone_number_id, AccountSid, bot id), when known. */
  identity?: string;
}

/**
 * The chat side of a sender that is also a phone-messaging channel (contract §3, §11). The
 * channel route verifies and shakes hands with the sender's own `verify` / `handshake`, fed
 * with `credentials`, so a delivery valid on one route is valid on the other (§10).
 */
export interface ChatSide {
  /** The channel route's provider name: `whatsapp` for Meta. */
  channel: ChatProvider;
  /** The namespace of its chat dedupe keys (`wa`, `tw`, `tg`). */
  dedupePrefix: string;
  /** Its record (what PUT /admin/channels/{id} takes) and how its secrets are kept (src/providers/channel-record.ts). */
  record: ChannelRecord;
  /** What the OpenAPI document says of its routes and its security scheme. */
  api: ChannelApi;
  /** What the delivery is called in a 400 (`not a <describes>`). */
  describes: string;
  /** A registered channel as the preset's secrets and options, and who it is registered for. */
  credentials(channel: StoredChannel): { secrets: string[]; options: Record<string, unknown>; identity?: string };
  /** The setting that limits this channel's body (default MAX_BODY_BYTES). */
  bodyLimitSetting?: 'WHATSAPP_MAX_BODY_BYTES';
  /** A counter of its own for items addressed to another number or account (igw_chat_items_skipped_total counts them too). */
  foreignMetric?: { name: string; help: string };
  /** The verified raw body, of the preset's `bodyKind` → the payload `map` reads; absent: JSON. Throws a Refusal (400/413). */
  parse?(raw: Buffer, request: { url: string; maxFields: number }): unknown;
  /** Pure: a verified, parsed payload → chat events; throws ChatPayloadError when it is not this sender's at all. */
  map(payload: unknown, channel: ChannelRef): ChatMapping;
}

/** The catalogue's families (contract §10.1 G). */
export type Family = 'hmac-recipe' | 'ed25519' | 'ecdsa' | 'rsa' | 'jwt' | 'oidc' | 'x509' | 'fields' | 'token';

/** What a preset authenticates (contract §10.A 8): the whole body, some fields of it, or only the sender. */
export type Authenticates = 'body' | 'fields' | 'sender';

/**
 * The keys a trigger of this preset holds (contract §10.1 B): shared secrets, public keys of an
 * algorithm, or either (Standard Webhooks: v1 HMAC or v1a Ed25519).
 */
export interface KeyDemand {
  secrets: boolean;
  /** The secret may be absent at PUT: the preset learns it in a handshake (Asana). */
  learnsSecret?: boolean;
  publicKeys?: PublicKeyAlgorithm;
}

/**
 * One signed sender (contract §10). A preset knows its signature scheme, its handshake, how to
 * read the event kind and the delivery id, and how the sender wants to be acknowledged; the
 * webhook route knows no preset by name.
 */
export interface Provider {
  name: string;
  title: string;
  /** One line for the catalogue: what is checked. */
  verifies: string;
  /** One line for the catalogue: where the delivery id comes from. */
  deliveryIdSource: string;
  /**
   * Where deliveryId() reads the id (contract §5): `signed` when only from material the
   * signature covers (the signed body, a signed header of the family that verified), so a
   * replay cannot change it; absent or `header` when from a header a replay may rewrite.
   */
  deliveryIdFrom?: 'signed' | 'header' | ((options: Record<string, unknown>) => 'signed' | 'header');
  /** The catalogue's family (absent: hmac-recipe, or token for the token presets). */
  family?: Family;
  /**
   * What the scheme authenticates, published in `data.provider.authenticates`; absent: `body`
   * (a token scheme declares `sender`).
   */
  authenticates?: Authenticates;
  /** Which keys the trigger holds; absent: 1-2 secrets. */
  keys?(options: Record<string, unknown>): KeyDemand;
  /** The shipped recipe, for the catalogue (an operator copies it into a `recipe` trigger). */
  recipe?: unknown;
  /** The scheme signs the public URL (`{url}`): the trigger then needs PUBLIC_BASE_URL (contract §10.1 C). */
  signsUrl?(options: Record<string, unknown>): boolean;
  /** A timestamp header of the scheme's own, for the delivery log's diagnostics. */
  timestampHeader?(options: Record<string, unknown>): string | undefined;
  /** The scheme signs a timestamp checked against toleranceSeconds (absent: it signs none). */
  signsTimestamp?: boolean | ((options: Record<string, unknown>) => boolean);
  /** Default tolerance of a signed timestamp (contract default 300 s); 0: none unless the trigger sets one. */
  defaultToleranceSeconds?: number;
  /** The same when it depends on the options (a `recipe` whose retries keep their timestamp: 0); wins over the number. */
  defaultToleranceFor?(options: Record<string, unknown>): number;
  /** Headers that carry credentials: never published. */
  signatureHeaders(options: Record<string, unknown>): readonly string[];
  /** Options this preset accepts (absent: none). */
  optionsSchema?: z.ZodType<Record<string, unknown>>;
  /** A secret the scheme cannot use (e.g. not base64), as a message. */
  secretProblem?(secret: string, options?: Record<string, unknown>): string | undefined;
  /** Checks what can be checked from the headers alone, so a bad request is refused before its body is read. */
  precheck(head: RequestHead): SignatureReason | undefined;
  /** The whole check over the raw body bytes, in constant time. */
  verify(request: SignedRequest): VerifyResult;
  /**
   * The one body type the sender posts to this URL (Twilio: a form, or JSON under `bodySHA256`).
   * A verified, non-empty body of another Content-Type (or none) is refused 415 on the trigger
   * and the channel route alike (src/providers/body-type.ts). Absent: any type contract §2 reads.
   */
  bodyKind?(url: string): BodyKind;
  handshake?: Handshake;
  /** One of the kinds its kinds file lists (contract §10); `raw` is the verified body as received. */
  kind(headers: IncomingHttpHeaders, body: unknown, raw?: Buffer, options?: Record<string, unknown>): string;
  /**
   * Kinds that only test the URL (GitHub's and Intercom's `ping`): answered 2xx like any
   * delivery, and published only when an `events` glob lists them (contract §10), not merely
   * because `events` is absent.
   */
  pings?: readonly string[];
  /** Removes, in place, a secret the sender puts inside the body (Graph's clientState), once it is checked: never published. */
  stripSecrets?(body: unknown): void;
  deliveryId(headers: IncomingHttpHeaders, body: unknown, raw?: Buffer, options?: Record<string, unknown>): string | undefined;
  /**
   * How a processed delivery is acknowledged; absent: contract §2. `no-content`: 204 (Discord
   * events); `deferred-interaction`: 200 {"type":5} unless the trigger's `response` says otherwise.
   */
  acknowledgement?: Acknowledgement | ((options: Record<string, unknown>) => Acknowledgement | undefined);
  /** For a sender that is also a chat channel: its mapping to chat events. */
  chat?: ChatSide;
  /**
   * Verification that may wait for a key (contract §10.1 D: a fetched certificate or JWKS);
   * when present the gate uses it instead of `verify`, and its kind and delivery id win over
   * `kind()` / `deliveryId()`. Only these presets cost a promise per request.
   */
  verifyFamily?(request: SignedRequest, keys: KeyFetcher): FamilyResult | Promise<FamilyResult>;
  /**
   * A verified delivery the preset answers itself (SNS `autoConfirm`): a reply (nothing
   * published), `invalid` (400 `invalid_handshake`), `key_unavailable` (503), or undefined.
   */
  answerVerified?(request: SignedRequest, keys: KeyFetcher): Promise<Reply | 'invalid' | 'key_unavailable' | undefined>;
  /** The hosts it may fetch keys from (contract §10.1 F, G); absent: none. */
  fetches?: readonly string[];
  /** The fields a `fields` preset's signature covers, published as `data.provider.signedFields`. */
  signedFields?: readonly string[];
  /** The request names a key URL the gateway checks against its allow-list (the delivery log's keyUrlAllowed). */
  keyUrlInRequest?: boolean;
  /** The sender posts JSON labelled text/plain (AWS SNS): once verified, it is parsed as the JSON it is. */
  textIsJson?: boolean;
}
