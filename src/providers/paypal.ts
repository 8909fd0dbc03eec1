import { z } from 'zod';
import { allowedKeyUrl } from '../keys/allow-list';
import { parseCertificateChain } from '../keys/key-material';
import { FAMILY_FACTS } from './families/facts';
import { verifyPaypal } from './families/paypal';
import { familyPreset } from './family-preset';
import { timestampProblem } from './schemes/signing';

const RFC_3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:[Zz]|[+-]\d{2}:\d{2})$/;

/** Seconds since the epoch of an RFC 3339 time; NaN (always out of tolerance) for anything else. */
function rfc3339Seconds(text: string | undefined): number {
  return text !== undefined && RFC_3339.test(text) ? Date.parse(text) / 1000 : NaN;
}

const certificateUrl = z.string().refine((url) => allowedKeyUrl('paypal-certificate', url) !== undefined, {
  message: "a PAYPAL-CERT-URL: https://api[-m][.sandbox].paypal.com/v1/notifications/certs/<name>",
});

const pemChain = z
  .string()
  .min(1)
  .max(32_768)
  .refine((text) => parseCertificateChain(Buffer.from(text), Date.now()) !== undefined, 'PEM certificates, the signing one first, each valid now (at most 5)');

export const paypalOptions = z.strictObject({
  webhookId: z.string().regex(/^[A-Za-z0-9-]{1,64}$/, "the webhook's id as PayPal's dashboard shows it"),
  certificates: z
    .record(certificateUrl, pemChain)
    .refine((certs) => Object.keys(certs).length <= 10, 'at most 10 pinned certificate URLs')
    .optional(),
});

type Options = z.infer<typeof paypalOptions>;

const header = (headers: Record<string, string | string[] | undefined>, name: string) => {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
};

/**
 * PayPal (contract §10.1 D): RSA-SHA256 over `id|time|webhookId|crc32(body)` with the certificate
 * at PAYPAL-CERT-URL, pinned by URL or fetched only from PayPal's hosts, chained to a public root.
 */
export const paypal = familyPreset({
  name: 'paypal',
  title: 'PayPal',
  verifies: 'PAYPAL-TRANSMISSION-SIG: RSA-SHA256 over transmission id|time|options.webhookId|crc32(body), certificate pinned by PAYPAL-CERT-URL or fetched from api[-m][.sandbox].paypal.com, chained to a public root, CN *.paypal.com; transmission time within the tolerance',
  deliveryIdSource: 'header PAYPAL-TRANSMISSION-ID (signed)',
  facts: FAMILY_FACTS.paypal,
  signedId: true,
  signatureHeaders: ['paypal-transmission-sig', 'paypal-transmission-id', 'paypal-transmission-time', 'paypal-cert-url', 'paypal-auth-algo'],
  optionsSchema: paypalOptions as unknown as z.ZodType<Record<string, unknown>>,
  fallbackKind: 'event',
  keyUrlInRequest: true,
  precheck: (head) => {
    if (!['paypal-transmission-sig', 'paypal-transmission-id', 'paypal-transmission-time', 'paypal-cert-url'].every((name) => header(head.headers, name))) {
      return 'signature_missing';
    }
    // The transmission time is checked before the body is read or a certificate fetched.
    const sent = rfc3339Seconds(header(head.headers, 'paypal-transmission-time'));
    if (Number.isNaN(sent)) return 'timestamp_out_of_tolerance';
    return head.toleranceSeconds > 0 ? timestampProblem(sent, head.nowSeconds, head.toleranceSeconds) : undefined;
  },
  verifyFamily: (request, keys) => {
    const options = request.options as Options;
    const { headers } = request;
    const anchors = keys.trustAnchors.paypal;
    return verifyPaypal({
      headers: {
        transmissionId: header(headers, 'paypal-transmission-id'),
        transmissionTime: header(headers, 'paypal-transmission-time'),
        transmissionSig: header(headers, 'paypal-transmission-sig'),
        certUrl: header(headers, 'paypal-cert-url'),
        authAlgo: header(headers, 'paypal-auth-algo'),
      },
      raw: request.raw,
      options: { webhookId: options.webhookId, ...(options.certificates && { certificates: options.certificates }) },
      keys,
      toleranceSeconds: request.toleranceSeconds,
      nowSeconds: request.nowSeconds,
      ...(anchors && { trustAnchors: anchors }),
    });
  },
});
