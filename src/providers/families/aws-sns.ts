import { verify as verifySignature, X509Certificate } from 'node:crypto';
import { allowedKeyUrl } from '../../keys/allow-list';
import { BoundedCache } from '../../keys/bounded-cache';
import type { KeyRequest, KeyResult } from '../../keys/key-fetcher';
import { isRecord, parseJson, refuse, type FamilyResult, type KeySourceKind } from './result';

/** What the SNS family needs of the key fetcher (src/keys/key-fetcher.ts satisfies it). */
export interface CertificateSource {
  certificate(request: KeyRequest): Promise<KeyResult<X509Certificate>>;
  /** Only what is cached already: nothing fetched. */
  cachedCertificate(request: KeyRequest): KeyResult<X509Certificate> | undefined;
}

export interface AwsSnsOptions {
  /** The topics this trigger takes (1–20); a valid message of another topic is `sender_not_allowed`. */
  topicArns: readonly string[];
  /** Pinned certificates by SigningCertURL (PEM): nothing fetched for these. */
  certificates?: Readonly<Record<string, string>>;
}

export interface AwsSnsInput {
  raw: Buffer;
  options: AwsSnsOptions;
  keys: CertificateSource;
  /** Only when the trigger sets one: SNS keeps the first Timestamp on retries (contract §10.1 A.3). */
  toleranceSeconds?: number;
  nowSeconds: number;
}

export const SNS_TYPES = ['Notification', 'SubscriptionConfirmation', 'UnsubscribeConfirmation'] as const;
export type SnsType = (typeof SNS_TYPES)[number];

/** The signed keys in canonical order (AWS: "Verifying the signatures of Amazon SNS messages"); absent optional ones are left out. */
const SIGNED_KEYS: Record<SnsType, readonly string[]> = {
  Notification: ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'],
  SubscriptionConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
  UnsubscribeConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
};
const REQUIRED = ['Type', 'MessageId', 'TopicArn', 'Message', 'Timestamp', 'SignatureVersion', 'Signature', 'SigningCertURL'];
const DIGEST = { '1': 'sha1', '2': 'sha256' } as const;
const BASE64 = /^[A-Za-z0-9+/]{1,1400}={0,2}$/;
/** Pinned certificates parsed once (parsing a PEM took about 40% of a delivery's verification). */
const PINNED = new BoundedCache<X509Certificate>(256, Date.now);
const PINNED_TTL_MS = 3_600_000;

/** An SNS message: every field a string; undefined when the body is not one. */
export function snsMessage(raw: Buffer): (Record<string, string> & { Type: SnsType }) | undefined {
  const body = parseJson(raw);
  if (!isRecord(body) || !SNS_TYPES.includes(body.Type as SnsType)) return undefined;
  const type = body.Type as SnsType;
  const needed = type === 'Notification' ? REQUIRED : [...REQUIRED, 'Token', 'SubscribeURL'];
  if (!needed.every((key) => typeof body[key] === 'string')) return undefined;
  // A null Subject is an absent one (sns-validator drops it too); any other signed value must be a string.
  const message = { ...body } as Record<string, unknown>;
  if (message.Subject === null) delete message.Subject;
  if (!SIGNED_KEYS[type].every((key) => message[key] === undefined || typeof message[key] === 'string')) return undefined;
  return message as Record<string, string> & { Type: SnsType };
}

/** `Key\nValue\n` for each signed key present, in order. */
export function canonicalString(message: Record<string, string> & { Type: SnsType }): string {
  return SIGNED_KEYS[message.Type]
    .filter((key) => message[key] !== undefined)
    .map((key) => `${key}\n${message[key]}\n`)
    .join('');
}

/**
 * AWS SNS over HTTPS (contract §10.1 D): SignatureVersion 1 (RSA-SHA1) or 2 (RSA-SHA256) over
 * the canonical string, with the certificate at SigningCertURL, pinned or fetched only when the
 * URL is AWS's (else `key_url_not_allowed`, nothing fetched); then the TopicArn must be one the
 * trigger lists (else `sender_not_allowed`). Kind `Type`, id `MessageId`, sender the topic.
 */
export async function verifyAwsSns(input: AwsSnsInput): Promise<FamilyResult> {
  const message = snsMessage(input.raw);
  if (!message) return refuse('signature_missing');
  const digest = DIGEST[message.SignatureVersion as keyof typeof DIGEST];
  if (!digest || !BASE64.test(message.Signature)) return refuse('signature_missing');
  const url = message.SigningCertURL;
  if (!allowedKeyUrl('aws-sns-certificate', url)) return refuse('key_url_not_allowed');
  // Refused before any fetch, so an unsigned sender cannot make the gateway fetch from AWS at will:
  // a certificate of another region than the topic's, or (when it is not pinned) a topic not listed.
  // Such a topic is still verified with a certificate already cached (SNS signs every topic of a
  // region with one), so a valid message of another topic is 403 sender_not_allowed, as with a pinned one.
  if (regionOfTopic(message.TopicArn) !== regionOfCertUrl(url)) return refuse('signature_invalid');
  const fetchable = input.options.certificates?.[url] !== undefined || input.options.topicArns.includes(message.TopicArn);
  const certificate = fetchable ? await certificateFor(url, input) : input.keys.cachedCertificate(certificateRequest(url));
  if (!certificate) return refuse('signature_invalid');
  if (!certificate.ok) return certificate;
  const valid = verifySignature(digest, Buffer.from(canonicalString(message)), certificate.value.publicKey, Buffer.from(message.Signature, 'base64'));
  if (!valid) return refuse('signature_invalid');
  if (input.toleranceSeconds !== undefined) {
    const sent = Date.parse(message.Timestamp) / 1000;
    if (!(Math.abs(input.nowSeconds - sent) <= input.toleranceSeconds)) return refuse('timestamp_out_of_tolerance');
  }
  if (!input.options.topicArns.includes(message.TopicArn)) return { ok: false, reason: 'sender_not_allowed', sender: message.TopicArn };
  return { ok: true, kind: message.Type, deliveryId: message.MessageId, sender: message.TopicArn, keySource: certificate.keySource };
}

function regionOfTopic(arn: string | undefined): string | undefined {
  return typeof arn === 'string' ? /^arn:aws(?:-[a-z]+)*:sns:([a-z0-9-]+):/.exec(arn)?.[1] : undefined;
}

function regionOfCertUrl(url: string): string | undefined {
  return /^sns\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$/.exec(new URL(url).hostname)?.[1];
}

async function certificateFor(
  url: string,
  input: AwsSnsInput,
): Promise<{ ok: true; value: X509Certificate; keySource: KeySourceKind } | { ok: false; reason: 'key_url_not_allowed' | 'key_unavailable' }> {
  const pem = input.options.certificates?.[url];
  if (pem !== undefined) {
    try {
      let certificate = PINNED.get(pem);
      if (!certificate) PINNED.set(pem, (certificate = new X509Certificate(pem)), PINNED_TTL_MS);
      return { ok: true, value: certificate, keySource: 'pinned' };
    } catch {
      return { ok: false, reason: 'key_unavailable' };
    }
  }
  return input.keys.certificate(certificateRequest(url));
}

const certificateRequest = (url: string): KeyRequest => ({ preset: 'aws-sns', source: 'aws-sns-certificate', url });
