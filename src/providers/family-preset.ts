import type { z } from 'zod';
import type { KeyFetcher } from '../keys/key-fetcher';
import { jsonParseCost } from '../body/safe-json';
import type { FamilyFacts } from './families/facts';
import { refuse, type FamilyResult } from './families/result';
import type { Acknowledgement, Handshake, Provider, Reply, RequestHead, SignedRequest, SignatureReason } from './provider';

/** One preset of contract §10.1 D: what differs between them; familyPreset fills in the rest. */
export interface FamilyPresetSpec {
  name: string;
  title: string;
  verifies: string;
  deliveryIdSource: string;
  /** Its row of FAMILY_FACTS: family, authenticates, keys, fetches, default tolerance, signed fields. */
  facts: FamilyFacts;
  /** The id the family reads is covered by what it verifies (SNS MessageId, Vonage's payload_hash). */
  signedId: boolean;
  signatureHeaders?: readonly string[];
  optionsSchema?: z.ZodType<Record<string, unknown>>;
  secretProblem?(secret: string): string | undefined;
  precheck?(head: RequestHead): SignatureReason | undefined;
  verifyFamily(request: SignedRequest, keys: KeyFetcher): FamilyResult | Promise<FamilyResult>;
  /**
   * The family reads the body before its signature holds (fields signed inside it, a key or token
   * named by it), so before the pipeline reserves the parse's memory: a body too costly to parse
   * is refused unparsed (`signature_missing`).
   */
  parsesBeforeVerifying?: boolean;
  answerVerified?(request: SignedRequest, keys: KeyFetcher): Promise<Reply | 'invalid' | 'key_unavailable' | undefined>;
  /** The kind when the family derives none (a body of another shape that still verified). */
  fallbackKind: string;
  acknowledgement?: Acknowledgement;
  /** Removes, in place, bearer proofs the sender puts inside the body (Graph's validationTokens): never published. */
  stripSecrets?(body: unknown): void;
  /** An unsigned POST handshake (Graph's ?validationToken subscription check). */
  handshake?: Handshake;
  keyUrlInRequest?: boolean;
  /** The sender posts JSON labelled text/plain (AWS SNS): parsed as JSON once verified. */
  textIsJson?: boolean;
  /** The scheme signs the trigger's public URL (Gong's webhook_url, Pub/Sub's default audience): PUBLIC_BASE_URL is required at PUT. */
  signsUrl?: (options: Record<string, unknown>) => boolean;
  /** The public-key algorithm of `publicKeys`, for a preset whose facts say keys: publicKeys. */
  publicKeyAlgorithm?: 'rsa-pkcs1-sha256' | 'ecdsa-p256-sha256' | 'ed25519';
}

/**
 * Parsed before it is verified, so before the parse memory is reserved: a body whose parse would
 * take more than this many times its bytes (a notification takes about 4; `[{},{},…]` 21–26) is
 * no provider's delivery, and is refused unparsed.
 */
const MAX_PARSE_COST_PER_BYTE = 10;

function tooCostlyToParse(raw: Buffer): boolean {
  return jsonParseCost(raw) > MAX_PARSE_COST_PER_BYTE * raw.length + 65_536;
}

/**
 * A Provider whose verification is a family unit (src/providers/families): the gate awaits
 * `verifyFamily` (it may fetch a key) and takes its kind and delivery id from the answer.
 */
export function familyPreset(spec: FamilyPresetSpec): Provider {
  const { facts } = spec;
  const tolerance = facts.defaultToleranceSeconds;
  return {
    name: spec.name,
    title: spec.title,
    verifies: spec.verifies,
    deliveryIdSource: spec.deliveryIdSource,
    deliveryIdFrom: spec.signedId ? 'signed' : 'header',
    family: facts.family,
    authenticates: facts.authenticates,
    fetches: facts.fetches,
    ...(facts.signedFields && { signedFields: facts.signedFields }),
    keys: () => ({ secrets: facts.keys === 'secrets', ...(facts.keys === 'publicKeys' && { publicKeys: spec.publicKeyAlgorithm ?? 'rsa-pkcs1-sha256' }) }),
    ...(spec.signsUrl && { signsUrl: spec.signsUrl }),
    // No tolerance unless the trigger sets one where the family's retries keep their first timestamp (§10.H).
    defaultToleranceSeconds: tolerance ?? 0,
    signsTimestamp: tolerance !== undefined,
    signatureHeaders: () => spec.signatureHeaders ?? [],
    ...(spec.optionsSchema && { optionsSchema: spec.optionsSchema }),
    ...(spec.secretProblem && { secretProblem: spec.secretProblem }),
    precheck: (head) => spec.precheck?.(head),
    // Never reached: the gate verifies these presets with verifyFamily. Refuses, should anything call it.
    verify: () => ({ ok: false, reason: 'signature_invalid' }),
    verifyFamily: spec.parsesBeforeVerifying ? (request, keys) => (tooCostlyToParse(request.raw) ? refuse('signature_missing') : spec.verifyFamily(request, keys)) : spec.verifyFamily,
    ...(spec.answerVerified && { answerVerified: spec.answerVerified }),
    kind: () => spec.fallbackKind,
    deliveryId: () => undefined,
    ...(spec.acknowledgement && { acknowledgement: spec.acknowledgement }),
    ...(spec.handshake && { handshake: spec.handshake }),
    ...(spec.stripSecrets && { stripSecrets: spec.stripSecrets }),
    ...(spec.keyUrlInRequest && { keyUrlInRequest: true }),
    ...(spec.textIsJson && { textIsJson: true }),
  };
}

/** The header precheck of the bearer-token families: an `Authorization: Bearer <token>` is there (its token is checked with the body). */
export function bearerPresent(head: RequestHead): SignatureReason | undefined {
  return /^Bearer \S+$/i.test(String(head.headers.authorization ?? '')) ? undefined : 'signature_missing';
}
