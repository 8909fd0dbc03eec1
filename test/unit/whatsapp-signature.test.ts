import type { IncomingHttpHeaders } from 'node:http';
import { meta } from '../../src/providers/meta';
import { signWhatsAppBody } from '../helpers/meta-signature';
import { check } from './providers/support';

/** Meta's X-Hub-Signature-256 check, as both the `meta` preset and the WhatsApp channel route run it. */
function verifyWhatsAppSignature(raw: Buffer, header: unknown, secret: string | undefined): boolean {
  const headers: IncomingHttpHeaders = header === undefined ? {} : { 'x-hub-signature-256': header as string };
  return check(meta, { raw, headers, secrets: secret === undefined ? [] : [secret] }).ok;
}

const SECRET = 'test-app-secret';

// Vectors computed outside Node:
//   printf '%s' "$BODY" | openssl dgst -sha256 -hmac test-app-secret
const PLAIN_BODY = '{"object":"whatsapp_business_account","entry":[]}';
const PLAIN_SIGNATURE =
  'sha256=c84a394cc475525991e78ff16e430b02e47f953877d2af0ade26956ce6f384dc';

// As Meta sends it: non-ASCII, "@" and "/" escaped inside strings.
const ESCAPED_BODY = String.raw`{"object":"whatsapp_business_account","entry":[{"id":"102290129340398","changes":[{"value":{"messages":[{"text":{"body":"Caf\u00e9 \u0040 https:\/\/example.com\/menu"}}]},"field":"messages"}]}]}`;
const ESCAPED_SIGNATURE =
  'sha256=54501466fed78080f29b76440e04634d73fa56b705ae8f0a28d7d89114df5522';

const PLAIN_HEX = PLAIN_SIGNATURE.slice('sha256='.length);

describe('signWhatsAppBody', () => {
  it('matches the openssl vector for a string and for a Buffer', () => {
    expect(signWhatsAppBody(PLAIN_BODY, SECRET)).toBe(PLAIN_SIGNATURE);
    expect(signWhatsAppBody(Buffer.from(PLAIN_BODY), SECRET)).toBe(PLAIN_SIGNATURE);
    expect(signWhatsAppBody(Buffer.from(ESCAPED_BODY), SECRET)).toBe(ESCAPED_SIGNATURE);
  });
});

describe('verifyWhatsAppSignature', () => {
  it('accepts the openssl vector', () => {
    expect(verifyWhatsAppSignature(Buffer.from(PLAIN_BODY), PLAIN_SIGNATURE, SECRET)).toBe(true);
  });

  it('accepts upper-case hex, which encodes the same bytes', () => {
    const header = `sha256=${PLAIN_HEX.toUpperCase()}`;
    expect(verifyWhatsAppSignature(Buffer.from(PLAIN_BODY), header, SECRET)).toBe(true);
  });

  it('verifies the escaped raw bytes, not a re-serialisation of them', () => {
    const raw = Buffer.from(ESCAPED_BODY, 'utf8');
    expect(raw.includes(String.raw`Caf\u00e9`)).toBe(true);
    expect(verifyWhatsAppSignature(raw, ESCAPED_SIGNATURE, SECRET)).toBe(true);

    const reserialised = Buffer.from(JSON.stringify(JSON.parse(ESCAPED_BODY)), 'utf8');
    expect(reserialised.includes('Café @ https://example.com/menu')).toBe(true);
    expect(reserialised.equals(raw)).toBe(false);
    expect(verifyWhatsAppSignature(reserialised, ESCAPED_SIGNATURE, SECRET)).toBe(false);
  });

  it('rejects a signature made with another secret', () => {
    const otherSecretHeader = signWhatsAppBody(PLAIN_BODY, 'another-secret');
    expect(otherSecretHeader).not.toBe(PLAIN_SIGNATURE);
    expect(verifyWhatsAppSignature(Buffer.from(PLAIN_BODY), otherSecretHeader, SECRET)).toBe(false);
    expect(verifyWhatsAppSignature(Buffer.from(PLAIN_BODY), PLAIN_SIGNATURE, 'another-secret')).toBe(
      false,
    );
  });

  it('rejects a missing or empty header', () => {
    expect(verifyWhatsAppSignature(Buffer.from(PLAIN_BODY), undefined, SECRET)).toBe(false);
    expect(verifyWhatsAppSignature(Buffer.from(PLAIN_BODY), '', SECRET)).toBe(false);
  });

  it.each([
    ['sha1 scheme', `sha1=${PLAIN_HEX.slice(0, 40)}`],
    ['sha1 scheme with a sha256-length digest', `sha1=${PLAIN_HEX}`],
    ['no scheme', PLAIN_HEX],
    ['upper-case scheme', `SHA256=${PLAIN_HEX}`],
    ['odd number of hex digits', `sha256=${PLAIN_HEX.slice(0, 63)}`],
    ['too short', `sha256=${PLAIN_HEX.slice(0, 62)}`],
    ['too long', `sha256=${PLAIN_HEX}00`],
    ['empty digest', 'sha256='],
    ['non-hex characters', `sha256=${'z'.repeat(64)}`],
    // (HTTP strips spaces around a header value before the gateway sees it.)
    ['trailing garbage', `sha256=${PLAIN_HEX}x`],
    ['two signatures', `${PLAIN_SIGNATURE},${PLAIN_SIGNATURE}`],
  ])('rejects a malformed header: %s', (_label, header) => {
    expect(verifyWhatsAppSignature(Buffer.from(PLAIN_BODY), header, SECRET)).toBe(false);
  });

  it('rejects a body with one tampered byte', () => {
    const tampered = Buffer.from(PLAIN_BODY);
    tampered[tampered.length - 2] ^= 0x01;
    expect(verifyWhatsAppSignature(tampered, PLAIN_SIGNATURE, SECRET)).toBe(false);
  });

  it('rejects a signature with one changed hex digit', () => {
    const lastDigit = PLAIN_HEX.at(-1) === '0' ? '1' : '0';
    const header = `sha256=${PLAIN_HEX.slice(0, -1)}${lastDigit}`;
    expect(verifyWhatsAppSignature(Buffer.from(PLAIN_BODY), header, SECRET)).toBe(false);
  });

  it('rejects everything when the app secret is empty', () => {
    const header = signWhatsAppBody(PLAIN_BODY, '');
    expect(verifyWhatsAppSignature(Buffer.from(PLAIN_BODY), header, '')).toBe(false);
  });

  it('returns false instead of throwing on junk arguments', () => {
    const junk: Array<[unknown, unknown, unknown]> = [
      [Buffer.alloc(0), PLAIN_SIGNATURE, SECRET],
      [Buffer.from(`${PLAIN_BODY} `), PLAIN_SIGNATURE, SECRET],
      [Buffer.from(PLAIN_BODY), [`sha1=${PLAIN_HEX}`], SECRET],
      [Buffer.from(PLAIN_BODY), PLAIN_SIGNATURE, undefined],
    ];
    for (const [body, header, secret] of junk) {
      const call = () =>
        verifyWhatsAppSignature(body as Buffer, header as string, secret as string);
      expect(call).not.toThrow();
      expect(call()).toBe(false);
    }
  });
});
