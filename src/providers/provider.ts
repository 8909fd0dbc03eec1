import type { IncomingHttpHeaders } from 'node:http';
import type { z } from 'zod';

/**
 * Why a signed delivery was refused (401, `details.reason`, src/http/reasons.ts): no usable
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
  options: Record<string, unknown>;
  toleranceSeconds: number;
  nowSeconds: number;
}

/** The same, with the body's raw bytes. */
export interface SignedRequest extends RequestHead {
  raw: Buffer;
}

/** `ok` names the secret that verified (Zoom's handshake answers with it). */
export type VerifyResult = { ok: true; secret: string } | { ok: false; reason: SignatureReason };

/** An answer written as is: a handshake. */
export interface Reply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** `forbidden`: a wrong verify token (403); `invalid`: a challenge the gateway will not echo (400). */
export type HandshakeAnswer = Reply | 'forbidden' | 'invalid';

export interface Handshake {
  /** GET handshakes are unsigned; POST ones are either unsigned (Graph) or signed (Slack, Zoom). */
  method: 'GET' | 'POST';
  /** Signed handshakes are answered after the signature check, with the parsed JSON body. */
  signed: boolean;
  /** One line for the catalogue. */
  describe: string;
  /** undefined: this request is not the handshake. */
  answer(input: { query: Record<string, unknown>; body: unknown; secret: string; options: Record<string, unknown> }): HandshakeAnswer | undefined;
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
  deliveryIdFrom?: 'signed' | 'header';
  /** The scheme signs a timestamp checked against toleranceSeconds (absent: it signs none). */
  signsTimestamp?: boolean | ((options: Record<string, unknown>) => boolean);
  /** Default tolerance of a signed timestamp (contract default 300 s). */
  defaultToleranceSeconds?: number;
  /** Headers that carry credentials: never published. */
  signatureHeaders(options: Record<string, unknown>): readonly string[];
  /** Options this preset accepts (absent: none). */
  optionsSchema?: z.ZodType<Record<string, unknown>>;
  /** A secret the scheme cannot use (e.g. not base64), as a message. */
  secretProblem?(secret: string): string | undefined;
  /** Checks what can be checked from the headers alone, so a bad request is refused before its body is read. */
  precheck(head: RequestHead): SignatureReason | undefined;
  /** The whole check over the raw body bytes, in constant time. */
  verify(request: SignedRequest): VerifyResult;
  handshake?: Handshake;
  kind(headers: IncomingHttpHeaders, body: unknown): string;
  /** Removes, in place, a secret the sender puts inside the body (Graph's clientState), once it is checked: never published. */
  stripSecrets?(body: unknown): void;
  deliveryId(headers: IncomingHttpHeaders, body: unknown): string | undefined;
  /** How a processed delivery is acknowledged; absent: contract §2. */
  acknowledgement?: 'empty' | 'twiml';
}
