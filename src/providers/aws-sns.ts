import { X509Certificate } from 'node:crypto';
import { z } from 'zod';
import { allowedKeyUrl } from '../keys/allow-list';
import { verifyAwsSns } from './families/aws-sns';
import { confirmSnsSubscription } from './families/aws-sns-confirm';
import { FAMILY_FACTS } from './families/facts';
import { parseJson, isRecord } from './families/result';
import { familyPreset } from './family-preset';

const TOPIC_ARN = /^arn:aws(?:-cn|-us-gov)?:sns:[a-z]{2}(?:-[a-z]+)+-\d:\d{12}:[A-Za-z0-9_.-]{1,256}$/;

const pem = z.string().min(1).max(16_384).refine((text) => {
  try {
    new X509Certificate(text);
    return true;
  } catch {
    return false;
  }
}, 'a PEM certificate');

const certificateUrl = z.string().refine((url) => allowedKeyUrl('aws-sns-certificate', url) !== undefined, {
  message: 'an SNS SigningCertURL: https://sns.<region>.amazonaws.com[.cn]/SimpleNotificationService-<32 hex>.pem',
});

export const awsSnsOptions = z.strictObject({
  topicArns: z.array(z.string().regex(TOPIC_ARN, 'an SNS topic ARN (arn:aws:sns:<region>:<account>:<name>)')).min(1).max(20),
  certificates: z
    .record(certificateUrl, pem)
    .refine((certs) => Object.keys(certs).length <= 10, 'at most 10 pinned certificates')
    .optional(),
  autoConfirm: z.boolean().default(false),
});

type Options = z.infer<typeof awsSnsOptions>;

/**
 * AWS SNS over HTTPS (contract §10.1 D): the signed JSON message (sent as text/plain), the
 * certificate pinned or fetched from AWS's own hosts only, the topic one the trigger lists.
 * A SubscriptionConfirmation is published (autoConfirm false) or confirmed by the gateway.
 */
export const awsSns = familyPreset({
  name: 'aws-sns',
  title: 'Amazon SNS',
  verifies: 'SignatureVersion 1 (RSA-SHA1) or 2 (RSA-SHA256) over the canonical message, certificate pinned or from sns.<region>.amazonaws.com; TopicArn one of options.topicArns',
  deliveryIdSource: 'body MessageId (signed)',
  facts: FAMILY_FACTS['aws-sns'],
  signedId: true,
  optionsSchema: awsSnsOptions as unknown as z.ZodType<Record<string, unknown>>,
  fallbackKind: 'Notification',
  keyUrlInRequest: true,
  textIsJson: true,
  parsesBeforeVerifying: true,
  verifyFamily: (request, keys) => {
    const options = request.options as Options;
    return verifyAwsSns({
      raw: request.raw,
      options: { topicArns: options.topicArns, ...(options.certificates && { certificates: options.certificates }) },
      keys,
      // 0: the trigger set none, and SNS keeps the first Timestamp on retries (§10.1 A.3).
      ...(request.toleranceSeconds > 0 && { toleranceSeconds: request.toleranceSeconds }),
      nowSeconds: request.nowSeconds,
    });
  },
  answerVerified: async (request, keys) => {
    const options = request.options as Options;
    const body = parseJson(request.raw);
    if (!options.autoConfirm || !isRecord(body) || body.Type !== 'SubscriptionConfirmation') return undefined;
    const confirmed = await confirmSnsSubscription(request.raw, options.topicArns, keys);
    if (!confirmed.ok) return confirmed.reason === 'invalid_handshake' ? 'invalid' : 'key_unavailable';
    return { status: 200, headers: { 'Content-Type': 'application/json; charset=utf-8' }, body: '{"message":"Subscription confirmed"}' };
  },
});
